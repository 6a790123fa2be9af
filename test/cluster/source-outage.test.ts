// A live source on a cluster node keeps what it saw while PostgreSQL refuses
// its writes: a real `vigil serve --store postgres://…` whose database is
// made to refuse every new observation for a few seconds (a CHECK (false)
// constraint the test adds and drops), while an http source's target
// changes status at every poll. Once the database takes writes again, every
// change the source saw is in the feed, in order, once.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMonitor, replayAll, subscribe } from '../support/client.ts';
import { createTestDatabase, postgresFor, type TestDatabase } from '../support/postgres.ts';
import { type ServerProcess, startServerProcess } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';

const unavailable = await postgresFor('the cluster source outage test');

const changes = 9;
const statusOf = (i: number) => (i < changes ? (i % 2 === 0 ? 200 : 503) : 200);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Setting {
  node: ServerProcess;
  monitor: { id: string; ownerToken: string };
  /** How many polls the target has answered. */
  answers(): number;
  /** The database refuses every new observation until `accept`. */
  refuse(): Promise<unknown>;
  accept(): Promise<unknown>;
}

/**
 * A node on the file's database with an http source polling every second a
 * target whose i-th answer has status `statusOf(i)`; everything is stopped
 * and the database accepts writes again after `work`.
 */
async function onRefusableNode(database: TestDatabase, statusOf: (i: number) => number, work: (setting: Setting) => Promise<void>) {
  let answers = 0;
  const target = createServer((_req, res) => {
    res.statusCode = statusOf(answers++);
    res.end('same body');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  const sql = new pg.Client({ connectionString: database.url });
  const accept = () => sql.query('ALTER TABLE observations DROP CONSTRAINT IF EXISTS refuse_all');
  let node: ServerProcess | undefined;
  try {
    node = await startServerProcess({ args: ['--store', database.url] });
    await sql.connect();
    const source = `http://127.0.0.1:${(target.address() as AddressInfo).port}/status`;
    const monitor = await createMonitor(node.base, { source: { kind: 'http', url: source, interval_s: 1 } });
    await work({
      node,
      monitor,
      answers: () => answers,
      refuse: () => sql.query('ALTER TABLE observations ADD CONSTRAINT refuse_all CHECK (false) NOT VALID'),
      accept,
    });
  } finally {
    await node?.kill();
    target.close();
    await accept().catch(() => undefined);
    await sql.end().catch(() => undefined);
  }
}

describe.skipIf(unavailable !== undefined)('a live source on a cluster node while PostgreSQL refuses its writes', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('stores every change it saw while refused once the database takes writes again', async () => {
    await onRefusableNode(database, statusOf, async ({ node, monitor, answers, refuse, accept }) => {
      for (let i = 0; i < 100 && answers() < 2; i++) await sleep(100);

      await refuse();
      const seenBefore = answers();
      for (let i = 0; i < 100 && answers() < seenBefore + 3; i++) await sleep(100);
      expect(answers() - seenBefore, 'the source polled while its writes were refused').toBeGreaterThanOrEqual(3);
      await accept();

      for (let i = 0; i < 400 && answers() <= changes; i++) await sleep(100);
      expect(answers(), 'the source polled past every change').toBeGreaterThan(changes);
      const expected = Array.from({ length: changes }, (_, i) => statusOf(i));
      let sourced: any[] = [];
      for (let i = 0; i < 100; i++) {
        try {
          const reader = await subscribe(node.base, { monitor: monitor.id, subscriber: 'agent:audit' }, monitor.ownerToken);
          sourced = (await replayAll(node.base, reader)).filter((o) => o.type === 'ai.vigil.source.http');
          if (sourced.length >= changes) break;
        } catch {
          // A reply refused while the node catches up: read again.
        }
        await sleep(300);
      }
      const output = node.output();
      expect(output, 'the refusal reached the source writes').toContain('are not stored yet');
      expect(output).toContain('they are kept and tried again');
      expect(
        sourced.map((o) => o.data.status),
        'one observation per change the source saw, none missing, none twice',
      ).toEqual(expected);
      const times = sourced.map((o) => Date.parse(o.time));
      expect(
        times.every((t, i) => i === 0 || t > times[i - 1]!),
        `each observation carries the time its poll saw the change, not when it was stored: ${sourced.map((o) => o.time).join(', ')}`,
      ).toBe(true);
    });
  }, scaled(120_000));

  it('says how many writes it did not store when stopped while the database still refuses them', async () => {
    await onRefusableNode(database, (i) => (i % 2 === 0 ? 200 : 503), async ({ node, answers, refuse }) => {
      for (let i = 0; i < 100 && answers() < 1; i++) await sleep(100);
      await refuse();
      for (let i = 0; i < 100 && !node.output().includes('are not stored yet'); i++) await sleep(100);
      expect(node.output()).toContain('are not stored yet');
      await node.stop();
      expect(node.output()).toMatch(/vigil: \d+ write\(s\) of the http source on monitor \S+ were not stored: the server closed first/);
    });
  }, scaled(60_000));
});
