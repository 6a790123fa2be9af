// One suite, every store: the same scenarios run against a server on a
// SQLite file and against a node on PostgreSQL — the conformance suite, and
// state that must survive a killed server (seq, cursor, lease, counters).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createMonitor, publish, replayAll, subscribe } from '../support/client.ts';
import { createTestDatabase, postgresFor, type TestDatabase } from '../support/postgres.ts';
import { type ServerProcess, startServerProcess, tempDir } from '../support/server-process.ts';
import { failedIds, runConform } from '../conform/run-conform.ts';
import { scaled } from '../support/time-scale.ts';

const unavailable = await postgresFor('the PostgreSQL half of the store suite');

interface StoreUnderTest {
  /** Server arguments naming the store; the same arguments reopen the same state. */
  open(): Promise<string[]>;
  close(): Promise<void>;
}

const stores: Array<[string, StoreUnderTest, boolean]> = [
  [
    'SQLite file',
    (() => {
      let args: string[] | undefined;
      return {
        open: async () => {
          args ??= ['--state', `${tempDir()}/state.db`];
          return args;
        },
        close: async () => {
          args = undefined;
        },
      };
    })(),
    false,
  ],
  [
    'PostgreSQL',
    (() => {
      let database: TestDatabase | undefined;
      return {
        open: async () => {
          database ??= await createTestDatabase();
          return ['--store', database.url];
        },
        close: async () => {
          await database?.drop();
          database = undefined;
        },
      };
    })(),
    unavailable !== undefined,
  ],
];

describe.each(stores)('store suite on %s', (_storeName, store, skip) => {
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    if (!skip) await store.open();
  });
  afterAll(async () => {
    await server?.kill();
    await store.close();
  });

  // The tests of a store share its server, each on monitors of its own: the one that ran the conformance
  // suite is the one the next test kills, and the one started after a kill is the next test's to kill
  // (three starts a store instead of five; what each test asserts is about the server it killed).
  const running = async () => {
    server ??= await startServerProcess({ transport: 'node', args: [...(await store.open()), '--allow-admin=conform-admin'] });
    return server;
  };
  /** Kills the store's server (SIGKILL) and starts another on the same store. */
  const killAndStart = async () => {
    const killed = server;
    server = undefined;
    await killed?.kill();
    return running();
  };

  it.skipIf(skip)('passes the conformance suite', { timeout: scaled(120_000) }, async () => {
    const node = await running();
    const run = await runConform(['--base', node.url, '--admin-token', 'conform-admin', '--json']);
    expect(failedIds(run), run.stdout + run.stderr).toEqual([]);
    expect(run.report!.skipped).toBe(0);
  });

  it.skipIf(skip)('keeps seq, cursor, lease and counters across a killed server', async () => {
    let node = await running();
    const monitor = await createMonitor(node.base, { capabilities: ['observe', 'act'] });
    for (let i = 0; i < 20; i++) expect((await publish(node.base, monitor.id, monitor.ownerToken, { type: 'suite.item', subject: `s${i}` })).status).toBe(201);
    const sub = await subscribe(node.base, { monitor: monitor.id, subscriber: 'agent:worker', capabilities: ['observe', 'act'] }, monitor.ownerToken);
    const page = await call(node.base, 'GET', `/subscriptions/${sub.id}/pull?limit=10`, { token: sub.token });
    expect((await call(node.base, 'POST', `/subscriptions/${sub.id}/ack`, { body: { cursor: page.body.next }, token: sub.token })).status).toBe(200);
    const claim = await call(node.base, 'POST', `/subscriptions/${sub.id}/leases/claim`, { body: { subject: 's3', lease_duration_seconds: 600 }, token: sub.token });
    expect(claim.status).toBe(201);
    const before = (await call(node.base, 'GET', `/monitors/${monitor.id}/state`, { token: monitor.ownerToken })).body;
    node = await killAndStart();
    const after = (await call(node.base, 'GET', `/monitors/${monitor.id}/state`, { token: monitor.ownerToken })).body;
    expect(after.head).toBe(before.head);
    expect(after.counters).toEqual(before.counters);
    const pulled = await call(node.base, 'GET', `/subscriptions/${sub.id}/pull?limit=1`, { token: sub.token });
    expect(pulled.body.cursor).toBe(page.body.next);
    const other = await subscribe(node.base, { monitor: monitor.id, subscriber: 'agent:other', capabilities: ['observe', 'act'] }, monitor.ownerToken);
    const held = await call(node.base, 'POST', `/subscriptions/${other.id}/leases/claim`, { body: { subject: 's3' }, token: other.token });
    expect(held.status).toBe(409);
    expect(held.body.holder).toBe(`sub:${sub.id}`);
    const next = await publish(node.base, monitor.id, monitor.ownerToken, { type: 'suite.item', subject: 'after' });
    expect(next.body.seq).toBe(before.head + 3); // the two subscribes wrote a `subscribed` entry each
    const seqs = (await replayAll(node.base, other)).map((o) => Number(o.id));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  }, scaled(60_000));

  it.skipIf(skip)('expires a lease on time after a restart, with no request arriving', async () => {
    let node = await running();
    const monitor = await createMonitor(node.base, { capabilities: ['observe', 'act'] });
    await publish(node.base, monitor.id, monitor.ownerToken, { type: 'suite.task', subject: 'job' });
    const sub = await subscribe(node.base, { monitor: monitor.id, subscriber: 'agent:worker', capabilities: ['observe', 'act'] }, monitor.ownerToken);
    const claim = await call(node.base, 'POST', `/subscriptions/${sub.id}/leases/claim`, { body: { subject: 'job', lease_duration_seconds: 4 }, token: sub.token });
    const expires = Date.parse(claim.body.expires);
    node = await killAndStart();
    await new Promise((r) => setTimeout(r, Math.max(0, expires - Date.now()) + 1500));
    const reader = await subscribe(node.base, { monitor: monitor.id, subscriber: 'agent:reader' }, monitor.ownerToken);
    const expired = (await replayAll(node.base, reader)).find((o) => o.type === 'ai.vigil.monitor.lease' && o.data.payload.action === 'expired');
    expect(expired).toBeDefined();
    expect(Date.parse(expired.time)).toBeGreaterThanOrEqual(expires);
    expect(Date.parse(expired.time)).toBeLessThan(Date.parse(reader.reply.body.subscription.created));
  }, scaled(60_000));
});
