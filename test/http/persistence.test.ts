// Persistence (issue 2, point 4): --state keeps everything across restarts,
// one server per file, tokens only as hashes, and no acknowledged write lost
// to SIGKILL.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { type ServerProcess, startServerProcess, tempDir, transports } from '../support/server-process.ts';
import { headOf, path, readFeed, sleep, vigilType } from './fixtures.ts';

// Each test starts and stops its own servers, so the tests run side by side.
const slow = 90_000; // several server starts each, on a possibly busy machine

describe.concurrent.each(transports)('persistence over %s', (transport) => {
  /** Runs `body` with a starter whose servers are all killed afterwards. */
  async function withServers(body: (start: (state: string) => Promise<ServerProcess>) => Promise<void>) {
    const running: ServerProcess[] = [];
    try {
      await body(async (state) => {
        const server = await startServerProcess({ transport, state });
        running.push(server);
        return server;
      });
    } finally {
      await Promise.all(running.map((s) => s.kill()));
    }
  }

  it('a restart keeps monitors, subscriptions, cursors, leases and observations; timers due while down fire at start', () =>
    withServers(async (start) => {
      const state = join(tempDir(), 'vigil.db');
      const first = await start(state);
      const m = await createMonitor(first.base, { name: 'kept', capabilities: ['observe', 'act'], types: ['app.x'] });
      for (let i = 0; i < 5; i++) await publish(first.base, m.id, m.ownerToken, { type: 'app.x', subject: `job-${i}`, data: { i } });
      await call(first.base, 'POST', path(m.id, '/update'), { token: m.ownerToken, body: { reason: 'r', patch: { description: 'd' } } });
      const worker = await subscribe(first.base, { monitor: m.id, subscriber: 'worker', capabilities: ['act'] }, m.ownerToken);
      const other = await subscribe(first.base, { monitor: m.id, subscriber: 'other', capabilities: ['act'] }, m.ownerToken);
      const sleeper = await subscribe(first.base, { monitor: m.id, subscriber: 'sleeper', retire_after_mute_seconds: 2 }, m.ownerToken);
      let current = first;
      const lease = (sub: { id: string; token: string }, action: string, body: Record<string, unknown>) =>
        call(current.base, 'POST', `/subscriptions/${sub.id}/leases/${action}`, { token: sub.token, body });
      await call(first.base, 'POST', `/subscriptions/${worker.id}/ack`, { token: worker.token, body: { cursor: 4 } });
      const held = await lease(worker, 'claim', { subject: 'job-1', lease_duration_seconds: 600 });
      await lease(worker, 'claim', { subject: 'job-2' });
      await lease(worker, 'complete', { subject: 'job-2', outcome: 'ok' });
      const soon = await lease(other, 'claim', { subject: 'job-3', lease_duration_seconds: 2 });
      expect([held.status, soon.status]).toEqual([201, 201]);
      const feedBefore = await readFeed(first.base, m.id, m.ownerToken);
      const headBefore = await headOf(first.base, m.id, m.ownerToken);
      await first.stop();
      // Both the short lease and the sleeper's mute period run out while no server is up.
      await sleep(Math.max(0, Date.parse(soon.body.expires) - Date.now()) + 200);

      current = await start(state);
      const base = current.base;
      const monitor = await call(base, 'GET', path(m.id), { token: m.ownerToken });
      expect(monitor.status).toBe(200);
      expect(monitor.body).toMatchObject({ name: 'kept', description: 'd', version: 2 });
      expect(monitor.body.head).toBeGreaterThanOrEqual(headBefore);
      const page = await call(base, 'GET', `/subscriptions/${worker.id}/pull?limit=1000`, { token: worker.token });
      expect(page.status).toBe(200);
      expect(page.body.cursor).toBe(4);
      expect(page.body.observations[0].id).toBe('4');
      const feedAfter = await readFeed(base, m.id, m.ownerToken);
      expect(feedAfter.slice(0, feedBefore.length)).toEqual(feedBefore);
      // Both normally fall due while no server runs (a very slow machine may fire them before the stop); each is recorded once.
      const timers = feedAfter
        .filter((o) => o.actor === 'system:vigil')
        .map((o) => [o.type, o.data.payload.action ?? o.data.payload.reason, o.subject ?? o.data.payload.subscription]);
      expect(timers).toHaveLength(2);
      expect(timers).toEqual(
        expect.arrayContaining([
          [vigilType('subscription_retired'), 'mute', sleeper.id],
          [vigilType('lease'), 'expired', 'job-3'],
        ]),
      );
      expect((await call(base, 'GET', `/subscriptions/${sleeper.id}/pull`, { token: sleeper.token })).status).toBe(404);

      const taken = await lease(other, 'claim', { subject: 'job-1' });
      expect(taken.status).toBe(409);
      expect(taken.body).toMatchObject({ code: 'LEASE_HELD', holder: `sub:${worker.id}`, expires: held.body.expires });
      const reclaim = await lease(worker, 'claim', { subject: 'job-1' });
      expect(reclaim.status).toBe(200);
      expect(reclaim.body.lease).toEqual(held.body.lease);
      const completed = await lease(worker, 'complete', { subject: 'job-2', outcome: 'ok' });
      expect(completed.status).toBe(200);
      expect(completed.body.lease.state).toBe('completed');
      expect((await lease(worker, 'claim', { subject: 'job-3' })).status).toBe(201);

      const after = await call(base, 'GET', path(m.id, '/state'), { token: m.ownerToken });
      // worker, other and one reader subscription per readFeed call; the sleeper was retired.
      expect(after.body.counters).toMatchObject({ observations: 5, acted: 1, subscriptions_active: 4 });
      // Seqs continue where they stopped: never reused.
      const next = await publish(base, m.id, m.ownerToken, { type: 'app.x' });
      expect(next.body.seq).toBe(await headOf(base, m.id, m.ownerToken));
      expect(next.body.seq).toBeGreaterThan(feedAfter.length);
    }), slow);

  it('one server per file, naming the holder; tokens are never stored in clear', () =>
    withServers(async (start) => {
      const dir = tempDir();
      const state = join(dir, 'vigil.db');
      const server = await start(state);
      const failure = await start(state).then(
        () => 'started',
        (error: Error) => error.message,
      );
      expect(failure).not.toBe('started');
      expect(failure).toContain(String(server.child.pid));

      // The first server is unharmed.
      const created = await call(server.base, 'POST', '/monitors', { body: { visibility: 'shared', subscribe_token: true } });
      expect(created.status).toBe(201);
      const { id } = created.body.monitor;
      const sub = await subscribe(server.base, { monitor: id, subscriber: 's' }, created.body.owner_token);
      const renewed = await call(server.base, 'POST', `/subscriptions/${sub.id}/renew`, { token: sub.token, body: {} });
      const tokens = [created.body.owner_token, created.body.subscribe_token, sub.token, renewed.body.token] as string[];
      // A refused write records its raw body, but never the bearer.
      expect((await publish(server.base, id, tokens[0]!, { type: vigilType('state') })).status).toBe(400);
      const grep = () => {
        const bytes = readdirSync(dir)
          .map((f) => readFileSync(join(dir, f)).toString('latin1'))
          .join('\n');
        expect(bytes).toContain(id);
        for (const token of tokens) expect(bytes.includes(token), `token ${token.slice(0, 6)}… found in the state files`).toBe(false);
      };
      grep();
      await server.stop();
      grep();
    }), slow);

  it('no publish answered 201 (nor ack answered 200) is lost when the server is killed with SIGKILL while 4 clients publish', () =>
    withServers(async (start) => {
      const state = join(tempDir(), 'vigil.db');
      const first = await start(state);
      const m = await createMonitor(first.base, { capabilities: ['observe', 'act'] });
      await publish(first.base, m.id, m.ownerToken, { type: 'app.setup', subject: 'job' });
      const worker = await subscribe(first.base, { monitor: m.id, subscriber: 'w', capabilities: ['act'] }, m.ownerToken);
      const acked = await call(first.base, 'POST', `/subscriptions/${worker.id}/ack`, { token: worker.token, body: { cursor: 3 } });
      const claimed = await call(first.base, 'POST', `/subscriptions/${worker.id}/leases/claim`, { token: worker.token, body: { subject: 'job' } });
      expect([acked.status, claimed.status]).toEqual([200, 201]);

      const confirmed: Array<{ seq: number; client: number; n: number }> = [];
      let stop = false;
      const client = async (clientId: number) => {
        for (let n = 0; !stop; n++) {
          try {
            const reply = await publish(first.base, m.id, m.ownerToken, { type: 'app.load', data: { client: clientId, n } });
            if (reply.status === 201) confirmed.push({ seq: reply.body.seq, client: clientId, n });
          } catch {
            return; // The connection died with the server.
          }
        }
      };
      // Meanwhile the worker acknowledges what has been confirmed so far.
      let acknowledged = 3;
      const acker = async () => {
        while (!stop) {
          const cursor = Math.max(acknowledged, ...confirmed.map((c) => c.seq + 1));
          try {
            const reply = await call(first.base, 'POST', `/subscriptions/${worker.id}/ack`, { token: worker.token, body: { cursor } });
            if (reply.status === 200) acknowledged = cursor;
          } catch {
            return;
          }
          await sleep(10);
        }
      };
      const clients = [...[0, 1, 2, 3].map(client), acker()];
      while (confirmed.length < 40 || acknowledged === 3) await sleep(20);
      await first.kill();
      stop = true;
      await Promise.all(clients);

      const second = await start(state);
      const feed = await readFeed(second.base, m.id, m.ownerToken);
      const bySeq = new Map(feed.map((o) => [Number(o.id), o]));
      const missing = confirmed.filter(({ seq, client, n }) => {
        const o = bySeq.get(seq);
        return o?.type !== 'app.load' || o.data.client !== client || o.data.n !== n;
      });
      expect(missing).toEqual([]);
      // Seqs stay gap-free inside the monitor.
      expect(feed.map((o) => Number(o.id))).toEqual(feed.map((_, i) => i + 1));
      const page = await call(second.base, 'GET', `/subscriptions/${worker.id}/pull?limit=1`, { token: worker.token });
      // An ack answered 200 survives too (a later one may have committed without its reply arriving).
      expect(page.body.cursor).toBeGreaterThanOrEqual(acknowledged);
      const again = await call(second.base, 'POST', `/subscriptions/${worker.id}/leases/claim`, { token: worker.token, body: { subject: 'job' } });
      expect(again.status).toBe(200);
    }), slow);
});
