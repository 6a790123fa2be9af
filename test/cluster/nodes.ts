// Real `vigil serve` nodes on one PostgreSQL database of the test file's own:
// the database is made before the file's tests and dropped after them, and
// the nodes a test started are killed after it.
import { afterAll, afterEach, beforeAll } from 'vitest';
import { call } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { type ServerProcess, startServerProcess } from '../support/server-process.ts';
import { until } from '../support/until.ts';

/**
 * Until every node lists all of them as live (discover's `nodes`): from then on each monitor's timers
 * and source stay on the node the rendezvous names. Before, a monitor created at once may be taken by
 * one node and handed to another as the others' heartbeats arrive (docs/scaling.md).
 */
export async function untilNodesSeeEachOther(nodes: ReadonlyArray<Pick<ServerProcess, 'base'>>): Promise<void> {
  await until('every node to list the others as live', async () => {
    const lists = await Promise.all(nodes.map(async (n) => ((await call(n.base, 'GET', '/discover')).body.nodes ?? []) as unknown[]));
    return lists.every((list) => list.length === nodes.length) ? true : undefined;
  });
}

export interface ClusterNodes {
  /** Starts `count` nodes on the file's database, each with `extra` flags. */
  start(count?: number, extra?: string[]): Promise<ServerProcess[]>;
  /** Starts one node on the file's database, on `port` when given (to restart it on its address). */
  startOne(extra?: string[], port?: number): Promise<ServerProcess>;
  /** The file's database (its name, for faults such as ending its sessions). */
  database(): TestDatabase;
  /** A node started elsewhere (with options of its own), killed after the test with the others. */
  adopt(node: ServerProcess): void;
  /**
   * Call inside a describe block: `count` nodes started once before its tests and killed after them,
   * each with `extra` flags, for tests that neither kill, restart nor configure a node (each on a
   * monitor of its own).
   */
  shared(count?: number, extra?: string[]): () => ServerProcess[];
  /**
   * Nodes of a describe block that kill some: the live ones among those started by `shared()`, topped
   * up to `count` with fresh nodes, which stay with them (killed after the block, not after the test).
   */
  liveShared(count?: number): Promise<ServerProcess[]>;
}

/**
 * Nodes of the tests hold 4 pooled sessions, not 8: three cluster files at once start up to 9 nodes,
 * each with 3 sessions of its own besides, and PostgreSQL refuses past its max_connections (100).
 */
const withSessions = (args: readonly string[]) => (args.includes('--store-sessions') ? [...args] : ['--store-sessions', '4', ...args]);

/** Call inside a describe block: registers the hooks that make and clean up the database and nodes. */
export function nodesOnOneDatabase(): ClusterNodes {
  let database: TestDatabase | undefined;
  let started: ServerProcess[] = [];
  let shared: ServerProcess[] = [];
  let sharedExtra: readonly string[] = [];
  const startOn = (extra: readonly string[], port?: number) =>
    startServerProcess({ args: ['--store', database!.url, ...withSessions(extra)], ...(port !== undefined && { port }) });
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async ({ task }) => {
    // What the nodes said is what explains a failure that a targeted run does not reproduce.
    if (task.result?.state === 'fail') {
      for (const [i, node] of [...shared, ...started].entries()) console.error(`node ${i + 1} (${node.url}) said:\n${node.output().slice(-20_000)}`);
    }
    await Promise.all(started.map((n) => n.kill()));
    started = [];
  });
  afterAll(async () => {
    await database?.drop();
  });
  return {
    database: () => database!,
    adopt: (node) => {
      started.push(node);
    },
    async start(count = 3, extra = []) {
      // One after another: on a busy two-core machine, three nodes compiling and starting at once
      // each took longer than a start is given.
      const nodes: ServerProcess[] = [];
      for (let i = 0; i < count; i++) {
        const node = await startOn(extra);
        started.push(node);
        nodes.push(node);
      }
      return nodes;
    },
    async startOne(extra = [], port) {
      const node = await startOn(extra, port);
      started.push(node);
      return node;
    },
    shared(count = 3, extra = []) {
      beforeAll(async () => {
        sharedExtra = extra;
        for (let i = 0; i < count; i++) shared.push(await startOn(extra));
      });
      afterAll(async () => {
        await Promise.all(shared.map((n) => n.kill()));
        shared = [];
      });
      return () => shared;
    },
    async liveShared(count = 3) {
      const live = shared.filter((n) => n.child.exitCode === null && n.child.signalCode === null);
      while (live.length < count) {
        const node = await startOn(sharedExtra);
        shared.push(node);
        live.push(node);
      }
      return live;
    },
  };
}
