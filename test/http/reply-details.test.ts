// Reply details other clients rely on (protocol §17, issue 15).
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { openSse } from '../support/sse.ts';
import { transports } from '../support/server-process.ts';
import { useDoor } from '../support/door.ts';
import { useServer } from './fixtures.ts';

const admin = 'adm-details';

describe.each(transports)('reply details (§17) over %s', (transport) => {
  const server = useServer({ transport, args: ['--allow-admin', admin] });
  const post = (sub: { id: string; token: string }, action: string, body: unknown = {}) =>
    call(server.base, 'POST', `/subscriptions/${sub.id}/${action}`, { token: sub.token, body });

  async function actingMonitor() {
    const m = await createMonitor(server.base, { capabilities: ['observe', 'act'] });
    for (const subject of ['a', 'b', 'c']) await publish(server.base, m.id, m.ownerToken, { type: 'app.job', subject });
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: 'worker', capabilities: ['observe', 'act'] }, m.ownerToken);
    return { ...m, sub };
  }

  it('410 CURSOR_EXPIRED carries relist and requested', async () => {
    const m = await createMonitor(server.base);
    for (let i = 0; i < 4; i++) await publish(server.base, m.id, m.ownerToken, { type: 'app.n' });
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: 'r', reset_policy: 'none' }, m.ownerToken);
    expect((await call(server.base, 'POST', '/admin/compact', { token: admin, body: { monitor: m.id, upto_seq: 3 } })).status).toBe(200);
    const replay = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?cursor=2`, { token: sub.token });
    expect(replay.status).toBe(410);
    expect(replay.body).toMatchObject({ code: 'CURSOR_EXPIRED', retention_floor: 4, relist: `monitors/state?id=${m.id}`, requested: 2 });
    const stored = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull`, { token: sub.token });
    expect(stored.status).toBe(410);
    expect(stored.body).toMatchObject({ relist: `monitors/state?id=${m.id}`, requested: 0 });
  });

  it('a retired subscription token is 404 {retired, cursor} everywhere; subscribing again answers 201', async () => {
    const m = await actingMonitor();
    expect((await post(m.sub, 'ack', { cursor: 3 })).status).toBe(200);
    const retired = await post(m.sub, 'retire', { reason: 'done' });
    expect(retired.status).toBe(200);
    expect(retired.body).toMatchObject({ ok: true, cursor_kept: 3, subscription: { id: m.sub.id, active: false } });
    expect(Number.isInteger(retired.body.seq)).toBe(true);
    const calls = [
      call(server.base, 'GET', `/subscriptions/${m.sub.id}/pull`, { token: m.sub.token }),
      post(m.sub, 'ack', { cursor: 3 }),
      post(m.sub, 'seek', { cursor: 1, reason: 'x' }),
      post(m.sub, 'renew'),
      post(m.sub, 'leases/claim', { subject: 'a' }),
      post(m.sub, 'leases/complete', { subject: 'a' }),
    ];
    for (const reply of await Promise.all(calls)) {
      expect(reply.status, JSON.stringify(reply.body)).toBe(404);
      expect(reply.body).toMatchObject({ code: 'NOT_FOUND', retired: true, cursor: 3 });
    }
    const stream = await openSse(`${server.base}/subscriptions/${m.sub.id}/stream`, { authorization: `Bearer ${m.sub.token}` });
    expect(stream.status).toBe(404);
    expect(stream.errorBody).toMatchObject({ code: 'NOT_FOUND', retired: true, cursor: 3 });
    const again = await call(server.base, 'POST', '/subscriptions', {
      token: m.sub.token,
      body: { monitor: m.id, subscriber: 'worker', capabilities: ['observe', 'act'] },
    });
    expect(again.status).toBe(201);
    expect(again.body.subscription).toMatchObject({ id: m.sub.id, active: true, cursor: 3 });
  });

  it('claim says whether it was idempotent; complete, release, reject and retire say ok, seq and more', async () => {
    const m = await actingMonitor();
    const first = await post(m.sub, 'leases/claim', { subject: 'a' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ idempotent: false, lease: { subject: 'a' }, expires: expect.any(String) });
    const second = await post(m.sub, 'leases/claim', { subject: 'a' });
    expect(second.status).toBe(200);
    expect(second.body.idempotent).toBe(true);

    const complete = await post(m.sub, 'leases/complete', { subject: 'a', outcome: 'done' });
    expect(complete.status).toBe(200);
    expect(complete.body).toMatchObject({ ok: true, lease: { subject: 'a', state: 'completed' } });
    expect(Number.isInteger(complete.body.seq)).toBe(true);
    const repeat = await post(m.sub, 'leases/complete', { subject: 'a', outcome: 'done' });
    expect(repeat.body).toEqual(complete.body);

    await post(m.sub, 'leases/claim', { subject: 'b' });
    const release = await post(m.sub, 'leases/release', { subject: 'b' });
    expect(release.body).toMatchObject({ ok: true, dead_letter: false, lease: { subject: 'b', dead_letter: false } });
    expect(Number.isInteger(release.body.seq)).toBe(true);

    let reject: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 5; i++) {
      await post(m.sub, 'leases/claim', { subject: 'c' });
      reject = await post(m.sub, 'leases/reject', { subject: 'c' });
      expect(reject.body).toMatchObject({ ok: true, dead_letter: i === 4, lease: { dead_letter: i === 4 } });
      expect(Number.isInteger(reject.body.seq)).toBe(true);
    }
  });
});

describe('reply details on a manual clock', () => {
  const door = useDoor();

  it('state ages are whole seconds, rounded down, or null', async () => {
    const m = await createMonitor(door.base);
    await publish(door.base, m.id, m.ownerToken, { type: 'app.n' });
    await door.base.clock.advance(1999);
    const state = await call(door.base, 'GET', `/monitors/${m.id}/state`, { token: m.ownerToken });
    const { since_last_observation_s, since_last_pull_s, since_last_source_contact_s } = state.body.ages;
    expect(since_last_observation_s).toBe(1);
    expect(since_last_pull_s).toBeNull();
    expect(since_last_source_contact_s === null || Number.isInteger(since_last_source_contact_s)).toBe(true);
  });
});
