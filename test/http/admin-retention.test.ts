// Administration and retention (§9 reset_policy, §10, §13): the admin token,
// compaction, the retention floor and what cursors below it do.
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { path, useServer } from './fixtures.ts';

const admin = 'admin-token-for-tests';

describe.each(transports)('admin and retention over %s', (transport) => {
  const server = useServer({ transport, args: [`--allow-admin=${admin}`] });

  it('admin routes always need the admin token', async () => {
    const { ownerToken } = await createMonitor(server.base, {});
    for (const token of [undefined, 'wrong', ownerToken]) {
      const snap = await call(server.base, 'GET', '/admin/snapshot', { token });
      expect(snap.status).toBe(401);
      expect(snap.body.code).toBe('UNAUTHORIZED');
      const compact = await call(server.base, 'POST', '/admin/compact', { token, body: { upto_seq: 1 } });
      expect(compact.status).toBe(401);
    }
    const snap = await call(server.base, 'GET', '/admin/snapshot', { token: admin });
    expect(snap.status).toBe(200);
    expect(snap.body.monitors).toBeGreaterThanOrEqual(1);
  });

  it('compaction raises the floor; cursors below it follow reset_policy, replays get 410', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    for (let i = 0; i < 5; i++) await publish(server.base, id, ownerToken, { type: 'app.x', data: { i } });
    const subs = {} as Record<'earliest' | 'latest' | 'none', { id: string; token: string }>;
    for (const policy of ['earliest', 'latest', 'none'] as const) {
      subs[policy] = await subscribe(server.base, { monitor: id, subscriber: policy, reset_policy: policy, from: 1 }, ownerToken);
    }
    const compacted = await call(server.base, 'POST', '/admin/compact', { token: admin, body: { monitor: id, upto_seq: 4 } });
    expect(compacted.status).toBe(200);
    expect(compacted.body).toEqual({ compacted: 4, retention_floor: 5 });

    const monitor = await call(server.base, 'GET', path(id), { token: ownerToken });
    expect(monitor.body.retention_floor).toBe(5);
    const state = await call(server.base, 'GET', path(id, '/state'), { token: ownerToken });
    expect(state.body.retention_floor).toBe(5);
    expect(state.body.computed_from.seq_from).toBe(5);
    const head = monitor.body.head as number;

    const pull = (sub: { id: string; token: string }, query = '') =>
      call(server.base, 'GET', `/subscriptions/${sub.id}/pull${query}`, { token: sub.token });
    const earliest = await pull(subs.earliest, '?limit=1000');
    expect(earliest.status).toBe(200);
    expect(earliest.body.cursor).toBe(5);
    expect(earliest.body.observations[0].id).toBe('5');
    expect(earliest.body.lag).toBe(head - 4);

    const latest = await pull(subs.latest);
    expect(latest.status).toBe(200);
    expect(latest.body.cursor).toBe(head + 1);
    expect(latest.body.observations).toEqual([]);

    const none = await pull(subs.none);
    expect(none.status).toBe(410);
    expect(none.body).toMatchObject({ code: 'CURSOR_EXPIRED', retention_floor: 5 });

    const replay = await pull(subs.earliest, '?cursor=2');
    expect(replay.status).toBe(410);
    expect(replay.body).toMatchObject({ code: 'CURSOR_EXPIRED', retention_floor: 5 });
    expect((await pull(subs.earliest, '?cursor=5')).status).toBe(200);

    // Compacting again below the floor changes nothing.
    const again = await call(server.base, 'POST', '/admin/compact', { token: admin, body: { monitor: id, upto_seq: 2 } });
    expect(again.body).toEqual({ compacted: 0, retention_floor: 5 });
    const missing = await call(server.base, 'POST', '/admin/compact', { token: admin, body: { monitor: 'no-such-monitor', upto_seq: 2 } });
    expect(missing.status).toBe(404);
    const bad = await call(server.base, 'POST', '/admin/compact', { token: admin, body: { monitor: id, upto_seq: 'all' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('upto_seq');
  });

  it('pull defaults to 50 observations, and a batch of 1000 is accepted whole', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const observations = Array.from({ length: 1000 }, (_, i) => ({ type: 'app.bulk', data: { i } }));
    const batch = await call(server.base, 'POST', path(id, '/observations'), { token: ownerToken, body: { observations } });
    expect(batch.status).toBe(201);
    expect(batch.body.seqs).toHaveLength(1000);
    expect(batch.body.seqs[999] - batch.body.seqs[0]).toBe(999);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'bulk' }, ownerToken);
    const page = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull`, { token: sub.token });
    expect(page.body.observations).toHaveLength(50);
    const all = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?limit=1000`, { token: sub.token });
    expect(all.body.observations).toHaveLength(1000);
    expect(all.body.lag).toBe(1002);
  });
});
