// Leases (§12): claim, idempotent re-claim, renew, complete, release, reject,
// dead-lettering, expiry without traffic, and one winner among 100 claimers.
// Rules and timers: in-process through the HTTP door on a manual clock
// (test/support/door.ts); hardening/contention.test.ts races 100 claimers
// over real sockets.
import { describe, expect, it } from 'vitest';
import { type Base, call, createMonitor, publish, subscribe } from '../support/client.ts';
import { type Door, useDoor } from '../support/door.ts';
import { fresh, headOf, readFeed, vigilType } from './fixtures.ts';

interface Sub {
  readonly id: string;
  readonly token: string;
}

function lease(base: Base, sub: Sub, action: string, body: Record<string, unknown>) {
  return call(base, 'POST', `/subscriptions/${sub.id}/leases/${action}`, { token: sub.token, body });
}

/** A monitor offering act, with observations on `subjects`, and `workers` act subscriptions. */
async function workplace(base: Base, subjects: string[], workers = 2, create: Record<string, unknown> = {}) {
  const m = await createMonitor(base, { capabilities: ['observe', 'act'], ...create });
  for (const subject of subjects) await publish(base, m.id, m.ownerToken, { type: 'app.job', subject });
  const subs: Sub[] = [];
  for (let i = 0; i < workers; i++) {
    subs.push(await subscribe(base, { monitor: m.id, subscriber: `worker-${i}`, capabilities: ['act'] }, m.ownerToken));
  }
  return { ...m, subs };
}

async function oneWinnerOf100(base: Base): Promise<void> {
  const { id, ownerToken, subs } = await workplace(base, ['hot'], 0, { visibility: 'public' });
  expect(subs).toEqual([]);
  const workers = await Promise.all(
    Array.from({ length: 100 }, (_, i) => subscribe(base, { monitor: id, subscriber: fresh(`claimer-${i}`), capabilities: ['act'] }, ownerToken)),
  );
  const replies = await Promise.all(workers.map((w) => lease(base, w, 'claim', { subject: 'hot', lease_duration_seconds: 60 })));
  const statuses = replies.map((r) => r.status);
  expect(statuses.filter((s) => s === 201)).toHaveLength(1);
  expect(statuses.filter((s) => s === 409)).toHaveLength(99);
  const winner = workers[statuses.indexOf(201)]!;
  for (const r of replies) if (r.status === 409) expect(r.body).toMatchObject({ code: 'LEASE_HELD', holder: `sub:${winner.id}` });
}

describe('leases', () => {
  const server = useDoor();
  const door = (): Door => server.base;

  it('claim is 201 with the lease; re-claim by the holder is 200 with the same lease', async () => {
    const { id, subs } = await workplace(server.base, ['job-1']);
    const [a] = subs as [Sub];
    const claimed = await lease(server.base, a, 'claim', { subject: 'job-1', lease_duration_seconds: 60 });
    expect(claimed.status).toBe(201);
    expect(claimed.body.lease).toMatchObject({
      subject: 'job-1',
      holder: `sub:${a.id}`,
      lease_duration_seconds: 60,
      lease_transitions: 1,
      attempts: 1,
      delivery_count_limit: 5,
      dead_letter: false,
      monitor: id,
      state: 'held',
    });
    expect(claimed.body.expires).toBe(claimed.body.lease.expires);
    const expiresIn = Date.parse(claimed.body.expires) - Date.now();
    expect(expiresIn).toBeGreaterThan(55_000);
    expect(expiresIn).toBeLessThanOrEqual(60_000);
    const again = await lease(server.base, a, 'claim', { subject: 'job-1', lease_duration_seconds: 60 });
    expect(again.status).toBe(200);
    expect(again.body.lease).toEqual(claimed.body.lease);
  });

  it('LEASE_HELD names the holder and expiry; LEASE_LOST for a non-holder', async () => {
    const { subs } = await workplace(server.base, ['job-2']);
    const [a, b] = subs as [Sub, Sub];
    const claimed = await lease(server.base, a, 'claim', { subject: 'job-2' });
    const held = await lease(server.base, b, 'claim', { subject: 'job-2' });
    expect(held.status).toBe(409);
    expect(held.body).toMatchObject({ code: 'LEASE_HELD', holder: `sub:${a.id}`, expires: claimed.body.expires });
    expect(held.body.rejected_seq).toBeTypeOf('number');
    for (const action of ['renew', 'complete', 'release', 'reject']) {
      const lost = await lease(server.base, b, action, { subject: 'job-2' });
      expect({ action, status: lost.status, code: lost.body.code, holder: lost.body.holder }).toEqual({
        action,
        status: 409,
        code: 'LEASE_LOST',
        holder: `sub:${a.id}`,
      });
    }
  });

  it('renew extends, release frees for the next claimer, complete twice gives the same reply', async () => {
    const { id, ownerToken, subs } = await workplace(server.base, ['job-3']);
    const [a, b] = subs as [Sub, Sub];
    const first = await lease(server.base, a, 'claim', { subject: 'job-3', lease_duration_seconds: 5 });
    await door().clock.advance(20);
    const renewed = await lease(server.base, a, 'renew', { subject: 'job-3', lease_duration_seconds: 120 });
    expect(renewed.status).toBe(200);
    expect(Date.parse(renewed.body.expires)).toBeGreaterThan(Date.parse(first.body.expires));
    expect(renewed.body.lease).toMatchObject({ lease_duration_seconds: 120, holder: `sub:${a.id}` });
    expect(renewed.body.lease.renew_time).not.toBeNull();

    const released = await lease(server.base, a, 'release', { subject: 'job-3', reason: 'busy' });
    expect(released.status).toBe(200);
    expect(released.body.lease).toMatchObject({ state: 'free', holder: null });
    const taken = await lease(server.base, b, 'claim', { subject: 'job-3' });
    expect(taken.status).toBe(201);
    expect(taken.body.lease).toMatchObject({ holder: `sub:${b.id}`, attempts: 2, lease_transitions: 2 });

    const done = await lease(server.base, b, 'complete', { subject: 'job-3', outcome: 'fixed', evidence: ['log://1'] });
    expect(done.status).toBe(200);
    expect(done.body.lease).toMatchObject({ state: 'completed', outcome: 'fixed', evidence: ['log://1'] });
    const repeat = await lease(server.base, b, 'complete', { subject: 'job-3', outcome: 'fixed', evidence: ['log://1'] });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual(done.body);

    const actions = (await readFeed(server.base, id, ownerToken))
      .filter((o) => o.type === vigilType('lease'))
      .map((o) => o.data.payload.action);
    expect(actions).toEqual(['claim', 'renew', 'release', 'claim', 'complete']);
    const state = await call(server.base, 'GET', `/monitors/${id}/state`, { token: ownerToken });
    expect(state.body.counters.acted).toBe(1);
  });

  it('the fifth reject dead-letters the subject; later claims are 409 DEAD_LETTERED', async () => {
    const { subs } = await workplace(server.base, ['job-4']);
    const [a] = subs as [Sub];
    for (let i = 1; i <= 5; i++) {
      expect((await lease(server.base, a, 'claim', { subject: 'job-4' })).status).toBe(201);
      const rejected = await lease(server.base, a, 'reject', { subject: 'job-4', reason: `attempt ${i}` });
      expect(rejected.status).toBe(200);
      expect(rejected.body.lease.state).toBe(i < 5 ? 'free' : 'dead_lettered');
      expect(rejected.body.lease.dead_letter).toBe(i === 5);
    }
    const refused = await lease(server.base, a, 'claim', { subject: 'job-4' });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('DEAD_LETTERED');
  });

  it('a subject never seen on the monitor is 404; no act is CAPABILITY_MISSING', async () => {
    const { id, ownerToken, subs } = await workplace(server.base, ['job-5'], 1, { visibility: 'public' });
    const missing = await lease(server.base, subs[0]!, 'claim', { subject: 'ghost' });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('NOT_FOUND');
    const observer = await subscribe(server.base, { monitor: id, subscriber: 'observer' }, ownerToken);
    const noAct = await lease(server.base, observer, 'claim', { subject: 'job-5' });
    expect(noAct.status).toBe(403);
    expect(noAct.body).toMatchObject({ code: 'CAPABILITY_MISSING', granted: ['observe'] });
    const wrongToken = await lease(server.base, { id: subs[0]!.id, token: observer.token }, 'claim', { subject: 'job-5' });
    expect(wrongToken.status).toBe(401);
  });

  it('claim validates duration and provenance', async () => {
    const { subs } = await workplace(server.base, ['job-6'], 1, { owner: 'human:ana' });
    const a = subs[0]!;
    for (const lease_duration_seconds of [0, 86401, 1.5, 'long', -1]) {
      const bad = await lease(server.base, a, 'claim', { subject: 'job-6', lease_duration_seconds });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('INVALID');
      expect(bad.body.error).toMatch(/lease_duration_seconds/);
    }
    const stranger = await lease(server.base, a, 'claim', { subject: 'job-6', on_behalf_of: 'human:bob' });
    expect(stranger.status).toBe(403);
    expect(stranger.body.code).toBe('PROVENANCE_CEILING');
    const human = await lease(server.base, a, 'claim', { subject: 'job-6', origin: 'human' });
    expect(human.status).toBe(403);
    expect(human.body.code).toBe('PROVENANCE_CEILING');
    const onBehalf = await lease(server.base, a, 'claim', { subject: 'job-6', origin: 'human', on_behalf_of: 'human:ana' });
    expect(onBehalf.status).toBe(201);
  });

  it('a lease expires at its time with no request arriving, and records expired', async () => {
    const { id, ownerToken, subs } = await workplace(server.base, ['job-7']);
    const [a, b] = subs as [Sub, Sub];
    const claimed = await lease(server.base, a, 'claim', { subject: 'job-7', lease_duration_seconds: 1 });
    const expires = Date.parse(claimed.body.expires);
    const headAtClaim = await headOf(server.base, id, ownerToken);
    // No traffic at all until well after the expiry.
    await door().clock.advanceTo(expires + 400);
    const head = await headOf(server.base, id, ownerToken);
    expect(head).toBe(headAtClaim + 1);
    const feed = await readFeed(server.base, id, ownerToken);
    const expired = feed.find((o) => Number(o.id) === head)!;
    expect(expired.type).toBe(vigilType('lease'));
    expect(expired.subject).toBe('job-7');
    expect(expired.actor).toBe('system:vigil');
    expect(expired.data.payload).toMatchObject({ action: 'expired', holder: `sub:${a.id}` });
    // On time, to the millisecond of the server's clock.
    expect(Date.parse(expired.time)).toBe(expires);

    const lost = await lease(server.base, a, 'renew', { subject: 'job-7' });
    expect(lost.status).toBe(409);
    expect(lost.body.code).toBe('LEASE_LOST');
    expect((await lease(server.base, b, 'claim', { subject: 'job-7' })).status).toBe(201);
  });

  it('100 concurrent claimers on one subject: exactly one 201', () => oneWinnerOf100(server.base));
});

