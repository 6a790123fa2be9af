// Faults on three real nodes under mixed load, Jepsen style: lease clients
// and publishers work through every node while nodes are killed (SIGKILL),
// paused (SIGSTOP / SIGCONT), cut off from their database
// (pg_terminate_backend), restarted (SIGTERM, one or all at once), and the
// PostgreSQL server is restarted: a server the run starts itself
// (test/support/pg-instance.ts), never the machine's shared one. The clients
// give up on a request after a timeout shorter than a pause and send it again
// through another node, as real ones do; afterwards the invariants are
// checked from the clients' own records (a request given up on counts as
// possibly applied) and the feeds every node serves.
// Used by test/cluster/chaos.test.ts (short) and `npm run chaos` (minutes).
import pg from 'pg';
import { call, createMonitor, publish, replayAll, subscribe } from '../../support/client.ts';
import { startPgInstance } from '../../support/pg-instance.ts';
import { createTestDatabase } from '../../support/postgres.ts';
import { type ServerProcess, stablePort, startServerProcess } from '../../support/server-process.ts';
import { checkFeeds } from '../workload/feed-invariants.ts';
import { type LeaseRecord, runLeaseClients } from '../workload/lease-clients.ts';
import { checkLeases, leaseHistory } from '../workload/lease-invariants.ts';
import { type PublishRecord, runPublishers } from '../workload/publishers.ts';

export type Fault = 'kill' | 'pause' | 'terminate' | 'sigterm' | 'restart-all' | 'pg-restart';
/** The faults a run applies to its own nodes and its own database server. */
export const faults: readonly Fault[] = ['kill', 'pause', 'terminate', 'sigterm', 'restart-all', 'pg-restart'];

export interface ChaosOptions {
  /** The faults in the order they are applied (one per round). */
  readonly rounds: readonly Fault[];
  /** How long a paused node stays stopped. */
  readonly pauseMs: number;
  /** How long a client waits for a reply before it gives up (shorter than a pause). */
  readonly timeoutMs: number;
  readonly log?: (line: string) => void;
}

export interface ChaosResult {
  readonly violations: string[];
  readonly stats: {
    readonly rounds: number;
    readonly faults: Record<Fault, number>;
    readonly publishes: { acknowledged: number; unknown: number; refused: number };
    readonly leaseRequests: number;
    /** Lease requests whose client gave up (or whose connection was cut): their outcome is unknown. */
    readonly leaseUnknown: number;
    readonly grants: number;
    readonly observations: number;
    readonly latestExpiryMs: number;
    readonly seconds: number;
  };
}

async function terminateSessions(server: string, database: string): Promise<number> {
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    const { rows } = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
    return rows.length;
  } finally {
    await admin.end();
  }
}

const exitOf = (node: ServerProcess) =>
  new Promise<{ code: number | null; signal: string | null }>((done) => {
    if (node.child.exitCode !== null || node.child.signalCode !== null) done({ code: node.child.exitCode, signal: node.child.signalCode });
    else node.child.once('exit', (code, signal) => done({ code, signal }));
  });

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const log = options.log ?? (() => {});
  const started = Date.now();
  const violations: string[] = [];
  const server = await startPgInstance();
  const database = await createTestDatabase(server.adminUrl).catch(async (error: unknown) => {
    await server.stop();
    throw error;
  });
  const ports = [await stablePort(), await stablePort(), await stablePort()];
  const bases = ports.map((port) => `http://127.0.0.1:${port}/mp/v0`);
  const nodes: ServerProcess[] = [];
  /** Exits this run caused (kill, stop); any other exit is a node that died. */
  const expected = new Set<ServerProcess>();
  const watch = (node: ServerProcess, i: number) => {
    void exitOf(node).then((exit) => {
      if (!expected.has(node)) violations.push(`node ${i} died (${JSON.stringify(exit)}): ${node.output().slice(-800)}`);
    });
  };
  const start = async (i: number) => {
    const node = await startServerProcess({ port: ports[i]!, args: ['--store', database.url] });
    nodes[i] = node;
    watch(node, i);
    return node;
  };
  const counts: Record<Fault, number> = { kill: 0, pause: 0, terminate: 0, sigterm: 0, 'restart-all': 0, 'pg-restart': 0 };
  const records: LeaseRecord[] = [];
  const published: PublishRecord[] = [];
  let running = true;
  let load: Promise<unknown> | undefined;
  try {
    for (let i = 0; i < 3; i++) await start(i);
    const leases = await createMonitor(bases[0]!, { capabilities: ['observe', 'act'] });
    const busy = await createMonitor(bases[1]!, {});
    const subjects = ['job-a', 'job-b', 'job-c'];
    for (const subject of subjects) await publish(bases[0]!, leases.id, leases.ownerToken, { type: 'test.task', subject });
    const clients = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        subscribe(bases[i % 3]!, { monitor: leases.id, subscriber: `agent:w${i}`, capabilities: ['observe', 'act'] }, leases.ownerToken),
      ),
    );
    load = Promise.all([
      runLeaseClients({ clients, subjects, bases: () => bases, running: () => running, records, timeoutMs: options.timeoutMs }),
      runPublishers({ monitor: busy.id, token: busy.ownerToken, publishers: 6, bases: () => bases, running: () => running, records: published, timeoutMs: options.timeoutMs }),
    ]);
    const stored = () => published.filter((p) => p.status === 201).length;
    // Readiness between faults: the cluster stored more writes (not a clock).
    const progressed = async (more: number) => {
      const target = stored() + more;
      while (stored() < target && violations.length === 0) await new Promise((r) => setTimeout(r, 50));
    };

    for (const [round, fault] of options.rounds.entries()) {
      await progressed(15);
      const i = Math.floor(Math.random() * 3);
      const node = nodes[i]!;
      const everyNode = fault === 'terminate' || fault === 'restart-all' || fault === 'pg-restart';
      log(`round ${round + 1}: ${fault}${everyNode ? '' : ` node ${i}`} (${stored()} writes acknowledged so far)`);
      counts[fault]++;
      if (fault === 'kill') {
        expected.add(node);
        node.child.kill('SIGKILL');
        await exitOf(node);
        await progressed(10);
        await start(i);
      } else if (fault === 'sigterm') {
        expected.add(node);
        node.child.kill('SIGTERM');
        const exit = await exitOf(node);
        if (exit.code !== 0) violations.push(`node ${i} stopped with SIGTERM exited ${JSON.stringify(exit)}: ${node.output().slice(-800)}`);
        await start(i);
      } else if (fault === 'restart-all') {
        const all = [...nodes];
        for (const n of all) expected.add(n);
        for (const n of all) n.child.kill('SIGTERM');
        for (const [j, exit] of (await Promise.all(all.map(exitOf))).entries()) {
          if (exit.code !== 0) violations.push(`node ${j} stopped with SIGTERM (all at once) exited ${JSON.stringify(exit)}: ${all[j]!.output().slice(-800)}`);
        }
        for (let j = 0; j < 3; j++) await start(j);
      } else if (fault === 'pg-restart') {
        await server.restart();
      } else if (fault === 'pause') {
        node.child.kill('SIGSTOP');
        await new Promise((r) => setTimeout(r, options.pauseMs));
        node.child.kill('SIGCONT');
      } else {
        log(`  ended ${await terminateSessions(server.adminUrl, database.name)} sessions`);
      }
    }
    await progressed(15);
    running = false;
    await load;

    // Wakes still cross nodes: a publish on each node wakes a long-poll on the next.
    for (let i = 0; i < 3; i++) {
      const waiter = await subscribe(bases[(i + 1) % 3]!, { monitor: busy.id, subscriber: `agent:waiter${i}`, from: 'head' }, busy.ownerToken);
      const waiting = call(bases[(i + 1) % 3]!, 'GET', `/subscriptions/${waiter.id}/pull?wait=30`, { token: waiter.token });
      await new Promise((r) => setTimeout(r, 200));
      const woke = await publish(bases[i]!, busy.id, busy.ownerToken, { type: 'test.wake', subject: `wake-${i}` });
      const page = await waiting;
      if (!page.body?.observations?.some((o: { id: string }) => Number(o.id) === woke.body.seq)) {
        violations.push(`a publish on node ${i} (seq ${woke.body.seq}) did not wake a long-poll on node ${(i + 1) % 3}: ${JSON.stringify(page.body).slice(0, 300)}`);
      }
    }

    const reader = await subscribe(bases[0]!, { monitor: busy.id, subscriber: 'agent:auditor' }, busy.ownerToken);
    const feeds = await Promise.all(bases.map((base) => replayAll(base, reader)));
    violations.push(...checkFeeds(published, feeds));
    const auditor = await subscribe(bases[1]!, { monitor: leases.id, subscriber: 'agent:auditor' }, leases.ownerToken);
    const verdict = checkLeases(records, leaseHistory(await replayAll(bases[1]!, auditor)));
    violations.push(...verdict.violations);
    for (const [i, node] of nodes.entries()) {
      const internal = node.output().match(/.*internal error.*/g);
      if (internal) violations.push(`node ${i} logged internal errors: ${internal.slice(0, 3).join(' | ')}`);
    }
    const unexpected = [...records.map((r) => r.status), ...published.map((p) => p.status)].filter((s) => s >= 500 && s !== 503);
    if (unexpected.length > 0) violations.push(`${unexpected.length} replies with a 5xx other than 503: ${[...new Set(unexpected)].join(', ')}`);
    return {
      violations,
      stats: {
        rounds: options.rounds.length,
        faults: counts,
        publishes: {
          acknowledged: stored(),
          unknown: published.filter((p) => p.status === 0 && p.error !== 'ECONNREFUSED').length,
          refused: published.filter((p) => p.status !== 201 && (p.status !== 0 || p.error === 'ECONNREFUSED')).length,
        },
        leaseRequests: records.length,
        leaseUnknown: records.filter((r) => r.status === 0 && r.body?.error !== 'ECONNREFUSED').length,
        grants: verdict.grants,
        observations: feeds[0]!.length,
        latestExpiryMs: verdict.latestExpiryMs,
        seconds: Math.round((Date.now() - started) / 1000),
      },
    };
  } finally {
    running = false;
    await load?.catch(() => {});
    for (const node of nodes) {
      expected.add(node);
      node.child.kill('SIGCONT');
    }
    await Promise.all(nodes.map((node) => node.kill()));
    await database.drop().catch(() => {});
    await server.stop();
  }
}
