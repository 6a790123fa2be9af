// A node catching up on a monitor while its own batch on that monitor is in
// flight: the replica then holds the batch's rows uncommitted, and a read of
// "what the database holds after the replica's head" starts past them. The
// batch failed (its session ended: 57P01), the reload after it failed too
// (the database was still away), and the catch-up went on to store what it
// had read after rows that were no longer there: another node's acknowledged
// write, stored in PostgreSQL at the seq the refused batch had used, was
// missing from this node's feed for good, and memory said the head was past
// it (seen once under database-loss.test.ts: two nodes of three served 64
// observations, the third 66). Node A runs in this process, so that its
// commit and reads can be held and failed at those moments; node B is a real
// `vigil serve`; the rows are real.
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MonitorSync } from '../../src/cluster/monitor-sync.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { PgStore } from '../../src/store/postgres/pg-store.ts';
import { createMonitor, publish, replayAll, subscribe } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { until, untilTrue } from '../support/until.ts';
import { nodesOnOneDatabase, untilNodesSeeEachOther } from './nodes.ts';

const unavailable = await postgresFor('the catch-up during a batch test');

/** What pg reports for a session PostgreSQL ended (pg_terminate_backend, a restart). */
const sessionEnded = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

describe.skipIf(unavailable !== undefined)("a catch-up read while the node's own batch is in flight", () => {
  const cluster = nodesOnOneDatabase();
  let inProcess: RunningServer | undefined;
  let release = () => {};

  afterEach(async () => {
    release();
    vi.restoreAllMocks();
    await inProcess?.close();
    inProcess = undefined;
  });

  it("never stores what it read past the batch once the batch is refused: every node serves the other node's write", { timeout: 120_000 }, async () => {
    // Every catch-up A starts is followed, so that none is under way when the scenario begins.
    const syncs: Array<Promise<void>> = [];
    const syncOf = MonitorSync.prototype.sync;
    vi.spyOn(MonitorSync.prototype, 'sync').mockImplementation(function (this: MonitorSync, ...args) {
      const done = syncOf.apply(this, args);
      syncs.push(done);
      return done;
    });
    const [b] = await cluster.start(1);
    inProcess = await startServer({ port: 0, store: cluster.database().url, storeSessions: 4, cloud: false, log: () => undefined });
    const a = `${inProcess.url}/mp/v0`;
    await untilNodesSeeEachOther([{ base: a }, b!]);
    const monitor = await createMonitor(a, {});
    const first = await publish(a, monitor.id, monitor.ownerToken, { type: 'test.item', subject: 'first' });
    expect(first.status).toBe(201);
    const head = first.body.seq as number;
    // The node the monitor's timers are assigned to has taken them (from then on they stay), and A's catch-up
    // of it, if A took them, is over: a catch-up under way would hold back the one below until the batch ends.
    const owners = new pg.Client({ connectionString: cluster.database().url });
    await owners.connect();
    try {
      const owned = async () => (await owners.query('select 1 from monitor_owners o join monitors m on m.key = o.mkey where m.id = $1', [monitor.id])).rowCount === 1;
      await untilTrue("the monitor's timers to be taken", owned);
    } finally {
      await owners.end();
    }
    await Promise.allSettled(syncs);

    let sync: MonitorSync | undefined;
    const changed = MonitorSync.prototype.changed;
    vi.spyOn(MonitorSync.prototype, 'changed').mockImplementation(function (this: MonitorSync, ...args) {
      sync = this;
      return changed.apply(this, args);
    });
    // A's commit of the batch carrying the publish below is held in flight, then fails as a session PostgreSQL ended.
    let entered = () => {};
    const inFlight = new Promise<void>((resolve) => (entered = resolve));
    const held = new Promise<void>((resolve) => (release = resolve));
    const commit = PgStore.prototype.commit;
    vi.spyOn(PgStore.prototype, 'commit').mockImplementation(async function (this: PgStore, ...args) {
      if (!JSON.stringify(args[0].observations).includes('refused-on-a')) return commit.apply(this, args);
      entered();
      await held;
      throw sessionEnded();
    });
    // The reload after the refused batch finds the database still away.
    const delta = PgStore.prototype.delta;
    let failNextRead = false;
    vi.spyOn(PgStore.prototype, 'delta').mockImplementation(async function (this: PgStore, ...args) {
      if (failNextRead) {
        failNextRead = false;
        throw sessionEnded();
      }
      return delta.apply(this, args);
    });

    const refused = publish(a, monitor.id, monitor.ownerToken, { type: 'test.item', subject: 'refused-on-a' });
    await inFlight;
    const stored = await publish(b!.base, monitor.id, monitor.ownerToken, { type: 'test.item', subject: 'stored-by-b' });
    expect(stored.status).toBe(201);
    expect(stored.body.seq).toBe(head + 1);
    // A hears of B's commit (and leaves it until its own batch ends); then A's notification session
    // comes back (it had ended with the others): A catches up on every monitor it knows.
    await untilTrue("A to hear of B's commit", () => sync !== undefined);
    const reads = vi.mocked(PgStore.prototype.delta).mock;
    const resynced = sync!.resyncKnown();
    // The catch-up has read the database after the batch's uncommitted row (it waits for the batch to end before storing anything).
    await until('the catch-up to read after the row of the batch in flight', () => {
      const at = reads.calls.findIndex(([, , afterSeq]) => afterSeq === head + 1);
      return at >= 0 ? reads.results[at]!.value : undefined;
    });
    failNextRead = true;
    release();
    expect((await refused).status).toBe(503);
    await resynced;

    // A's next write follows B's (memory says so); then every node serves the same feed, gapless.
    const next = await publish(a, monitor.id, monitor.ownerToken, { type: 'test.item', subject: 'after' });
    expect(next.status).toBe(201);
    expect(next.body.seq).toBe(head + 2);
    const reader = await subscribe(b!.base, { monitor: monitor.id, subscriber: 'agent:auditor' }, monitor.ownerToken);
    const shapes = (feed: any[]) => feed.map((o) => [Number(o.id), o.type, o.subject]);
    const items = (feed: any[]) => feed.filter((o) => o.type === 'test.item').map((o) => [Number(o.id), o.subject]);
    const onB = await replayAll(b!.base, reader);
    expect(items(onB)).toEqual([
      [head, 'first'],
      [head + 1, 'stored-by-b'],
      [head + 2, 'after'],
    ]);
    expect(onB.map((o) => Number(o.id))).toEqual(Array.from({ length: onB.length }, (_, i) => i + 1));
    expect(shapes(await replayAll(a, reader))).toEqual(shapes(onB));
  });
});
