// A node whose memory of a monitor is behind the database (another node
// wrote it) catches up with one read for all the requests that found it
// behind while a read was under way. Each used to queue a read of its own
// behind the others', and every other node's commit queued one more (a node
// with a dashboard follows every commit), so on a monitor that other nodes
// kept changing a request waited behind a queue of reads: 10-14 s under
// `vigil bench leases` across three nodes. Node A runs in this process, so
// that its reads of PostgreSQL can be held and counted (the real reads run);
// node B is a real `vigil serve`.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MonitorSync } from '../../src/cluster/monitor-sync.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { PgStore } from '../../src/store/postgres/pg-store.ts';
import { call, createMonitor, publish } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { until } from '../support/until.ts';
import { nodesOnOneDatabase } from './nodes.ts';

const unavailable = await postgresFor('the catch-up read test');

const requests = 20;

describe.skipIf(unavailable !== undefined)('a node behind on a monitor', () => {
  const cluster = nodesOnOneDatabase();
  let inProcess: RunningServer | undefined;
  let release = () => {};

  afterEach(async () => {
    release();
    vi.restoreAllMocks();
    await inProcess?.close();
    inProcess = undefined;
  });

  it('catches up with one read for all the requests that found it behind, and each answers what B stored', { timeout: 60_000 }, async () => {
    const [b] = await cluster.start(1);
    inProcess = await startServer({ port: 0, store: cluster.database().url, storeSessions: 4, cloud: false, log: () => undefined });
    const a = `${inProcess.url}/mp/v0`;
    const monitor = await createMonitor(a, {});
    expect((await call(a, 'GET', `/monitors/${monitor.id}`, { token: monitor.ownerToken })).status).toBe(200);

    // A's first catch-up read waits until every request has found A behind; the real read then runs.
    const held = new Promise<void>((resolve) => (release = resolve));
    const read = PgStore.prototype.delta;
    const delta = vi.spyOn(PgStore.prototype, 'delta').mockImplementation(async function (this: PgStore, ...args) {
      await held;
      return read.apply(this, args);
    });
    const catchUp = vi.spyOn(MonitorSync.prototype, 'catchUp');
    const stored = await publish(b!.base, monitor.id, monitor.ownerToken, { type: 'test.item', subject: 'from-b' });
    expect(stored.status).toBe(201);
    const answers = Promise.all(Array.from({ length: requests }, () => call(a, 'GET', `/monitors/${monitor.id}`, { token: monitor.ownerToken })));
    await until('every request on A to have read the rev B left', () => (catchUp.mock.calls.length >= requests ? true : undefined));
    release();
    const replies = await answers;

    expect(replies.map((r) => r.status)).toEqual(Array(requests).fill(200));
    expect(replies.map((r) => r.body.head)).toEqual(Array(requests).fill(stored.body.seq));
    // Catch-ups read from the rev memory holds (a takeover of the monitor's timers reads from 0).
    const catchUps = delta.mock.calls.filter(([, sinceRev]) => sinceRev > 0).length;
    expect(catchUps).toBeGreaterThanOrEqual(1);
    expect(catchUps).toBeLessThanOrEqual(2);
  });
});
