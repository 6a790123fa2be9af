// Nodes that lose their database carry on (protocol.md §20): PostgreSQL
// ending every session of three real nodes under load (pg_terminate_backend,
// 57P01, as a restart or a failover does) kills no node; requests meanwhile
// are answered, at worst 503 STORE_UNAVAILABLE with Retry-After; no
// acknowledged write is lost and no lease has two holders; the notification
// and lock sessions come back (a cross-node wake, an expiry recorded). A
// store address that accepts and never answers fails the start, naming it.
import { type Server, createServer, type Socket } from 'node:net';
import { spawnChild } from '../support/children.ts';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, replayAll, subscribe } from '../support/client.ts';
import { adminUrl, postgresFor } from '../support/postgres.ts';
import { repoRoot, vigilArgs } from '../support/server-process.ts';
import { nodesOnOneDatabase } from './nodes.ts';
import { checkFeeds } from './workload/feed-invariants.ts';
import { type LeaseRecord, runLeaseClients } from './workload/lease-clients.ts';
import { checkLeases, leaseHistory } from './workload/lease-invariants.ts';
import { type PublishRecord, runPublishers } from './workload/publishers.ts';

const unavailable = await postgresFor('the cluster database-loss tests');

/** Ends every session of the nodes on `database` (the pool's, the notification and the lock sessions); returns how many. */
async function terminateSessions(database: string): Promise<number> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query('select pg_terminate_backend(pid) as done from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
    return rows.length;
  } finally {
    await admin.end();
  }
}

describe.skipIf(unavailable !== undefined)('nodes that lose their database', () => {
  const cluster = nodesOnOneDatabase();

  it('survive PostgreSQL ending all their sessions under load, losing no write and giving no lease twice', { timeout: 180_000 }, async () => {
    const nodes = await cluster.start(3);
    const bases = nodes.map((n) => n.base);
    const database = cluster.database().name;
    const leases = await createMonitor(bases[0]!, { capabilities: ['observe', 'act'] });
    const busy = await createMonitor(bases[1]!, {});
    const subjects = ['job-a', 'job-b'];
    for (const subject of subjects) await publish(bases[0]!, leases.id, leases.ownerToken, { type: 'test.task', subject });
    const clients = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        subscribe(bases[i % 3]!, { monitor: leases.id, subscriber: `agent:w${i}`, capabilities: ['observe', 'act'] }, leases.ownerToken),
      ),
    );

    const records: LeaseRecord[] = [];
    const published: PublishRecord[] = [];
    let running = true;
    const load = Promise.all([
      runLeaseClients({ clients, subjects, bases: () => bases, running: () => running, records }),
      runPublishers({ monitor: busy.id, token: busy.ownerToken, publishers: 6, bases: () => bases, running: () => running, records: published }),
    ]);
    const stored = () => published.filter((p) => p.status === 201).length;
    const alive = () => nodes.every((n) => n.child.exitCode === null && n.child.signalCode === null);
    // Until writes were stored again (or a node died: the assertions below say which).
    const progressed = async (after: number) => {
      while (alive() && stored() < after + 10) await new Promise((r) => setTimeout(r, 50));
    };
    let terminated = 0;
    try {
      for (let round = 0; round < 4; round++) {
        await progressed(stored());
        terminated += await terminateSessions(database);
      }
      // Writes are stored again after the last round.
      await progressed(stored());
    } finally {
      running = false;
      await load;
    }
    expect(terminated).toBeGreaterThan(3 * 4);
    for (const node of nodes) {
      expect({ exit: node.child.exitCode, signal: node.child.signalCode, log: node.output().slice(-600) }).toMatchObject({ exit: null, signal: null });
    }
    const replies = [...records.map((r) => ({ status: r.status, retryAfter: r.retryAfter, body: r.body })), ...published];
    // Every request was answered; a refusal for the database's sake says when to try again.
    expect(replies.filter((r) => r.status === 0 || (r.status >= 500 && r.status !== 503))).toEqual([]);
    expect(replies.filter((r) => r.status === 503 && r.retryAfter !== '1')).toEqual([]);

    const reader = await subscribe(bases[2]!, { monitor: busy.id, subscriber: 'agent:auditor' }, busy.ownerToken);
    const feeds = await Promise.all(bases.map((base) => replayAll(base, reader)));
    expect(checkFeeds(published, feeds)).toEqual([]);
    const auditor = await subscribe(bases[1]!, { monitor: leases.id, subscriber: 'agent:auditor' }, leases.ownerToken);
    expect(checkLeases(records, leaseHistory(await replayAll(bases[1]!, auditor))).violations).toEqual([]);

    // The notification sessions came back: a publish on node 0 wakes a long-poll on node 2.
    const waiter = await subscribe(bases[2]!, { monitor: busy.id, subscriber: 'agent:waiter', from: 'head' }, busy.ownerToken);
    const waiting = call(bases[2]!, 'GET', `/subscriptions/${waiter.id}/pull?wait=20`, { token: waiter.token });
    await new Promise((r) => setTimeout(r, 300));
    const woke = await publish(bases[0]!, busy.id, busy.ownerToken, { type: 'test.wake', subject: 'after' });
    expect((await waiting).body.observations.map((o: { id: string }) => Number(o.id))).toContain(woke.body.seq);

    // The lock sessions came back: a lease nobody completes is expired by whichever node holds the monitor now.
    // A lease the load's clients took last may still be held (1-2 s, or until its expiry is written): wait it out.
    const claimLapsing = () =>
      call(bases[0]!, 'POST', `/subscriptions/${clients[0]!.id}/leases/claim`, { token: clients[0]!.token, body: { subject: 'job-a', lease_duration_seconds: 1 } });
    let lapsing = await claimLapsing();
    for (let tries = 0; tries < 20 && lapsing.status === 409 && lapsing.body.code === 'LEASE_HELD'; tries++) {
      await new Promise((r) => setTimeout(r, Math.max(100, Date.parse(lapsing.body.expires) - Date.now() + 100)));
      lapsing = await claimLapsing();
    }
    const holder = `sub:${clients[0]!.id}`;
    const expires = lapsing.status === 201 || lapsing.status === 200 ? lapsing.body.expires : undefined;
    expect(expires, `the claim answered ${lapsing.status} ${JSON.stringify(lapsing.body)}`).toBeTypeOf('string');
    const watcher = await subscribe(bases[1]!, { monitor: leases.id, subscriber: 'agent:expiry-watcher', from: 'head' }, leases.ownerToken);
    for (;;) {
      const page = await call(bases[1]!, 'GET', `/subscriptions/${watcher.id}/pull?wait=20`, { token: watcher.token });
      const expiry = leaseHistory(page.body.observations).find((h) => h.action === 'expired' && h.holder === holder);
      if (expiry) break;
      await call(bases[1]!, 'POST', `/subscriptions/${watcher.id}/ack`, { token: watcher.token, body: { cursor: page.body.next } });
    }
  });

  it('fails the start within seconds when the store address accepts and never answers, naming the address', { timeout: 60_000 }, async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const port = (silent.address() as { port: number }).port;
    const url = `postgres://vigil@127.0.0.1:${port}/vigil`;
    try {
      const child = spawnChild(process.execPath, vigilArgs(['serve', '--port', '0', '--store', url]), { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
      expect(code).not.toBe(0);
      expect(output).toContain(`127.0.0.1:${port}`);
      expect(output).toMatch(/timeout/i);
      expect(output).not.toMatch(/serving the monitor protocol/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => silent.close(done));
    }
  });
});
