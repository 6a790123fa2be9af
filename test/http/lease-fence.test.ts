// Fencing tokens (protocol.md §21) on the wire: every grant carries `fence`,
// the seq of its claim's `lease` observation, growing with every claim of the
// subject; a renew, complete, release or reject that names another grant's
// token is refused LEASE_LOST with the current holder and token and changes
// nothing, while a call without a token is judged by its holder as before.
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { readFeed, useServer, vigilType } from './fixtures.ts';

interface Sub {
  readonly id: string;
  readonly token: string;
}

describe.each(transports)('lease fencing tokens over %s', (transport) => {
  const server = useServer({ transport });
  const lease = (sub: Sub, action: string, body: Record<string, unknown>) =>
    call(server.base, 'POST', `/subscriptions/${sub.id}/leases/${action}`, { token: sub.token, body });

  async function workplace(subject: string) {
    const m = await createMonitor(server.base, { capabilities: ['observe', 'act'] });
    await publish(server.base, m.id, m.ownerToken, { type: 'app.job', subject });
    const a = await subscribe(server.base, { monitor: m.id, subscriber: 'worker-a', capabilities: ['act'] }, m.ownerToken);
    const b = await subscribe(server.base, { monitor: m.id, subscriber: 'worker-b', capabilities: ['act'] }, m.ownerToken);
    return { ...m, a, b };
  }

  it('/discover lists the fencing extension', async () => {
    const reply = await call(server.base, 'GET', '/discover');
    expect(reply.body.extensions).toContain('leases.fence');
  });

  it('a grant’s fence is the seq of its claim observation and grows with every claim', async () => {
    const { id, ownerToken, a, b } = await workplace('job');
    const first = await lease(a, 'claim', { subject: 'job' });
    expect(first.status).toBe(201);
    expect(first.body.fence).toBeTypeOf('number');
    expect(first.body.lease.fence).toBe(first.body.fence);
    const again = await lease(a, 'claim', { subject: 'job' });
    expect(again.status).toBe(200);
    expect(again.body.fence).toBe(first.body.fence);
    const renewed = await lease(a, 'renew', { subject: 'job', fence: first.body.fence });
    expect(renewed.status).toBe(200);
    expect(renewed.body.fence).toBe(first.body.fence);
    expect((await lease(a, 'release', { subject: 'job', fence: first.body.fence })).status).toBe(200);
    const second = await lease(b, 'claim', { subject: 'job' });
    expect(second.body.fence).toBeGreaterThan(first.body.fence);
    expect((await lease(b, 'complete', { subject: 'job', fence: second.body.fence })).status).toBe(200);
    const third = await lease(a, 'claim', { subject: 'job' });
    expect(third.body.fence).toBeGreaterThan(second.body.fence);

    const claims = (await readFeed(server.base, id, ownerToken)).filter((o) => o.type === vigilType('lease') && o.data.payload.action === 'claim');
    expect(claims.map((o) => Number(o.id))).toEqual([first.body.fence, second.body.fence, third.body.fence]);
    expect(claims.map((o) => o.data.payload.fence)).toEqual([first.body.fence, second.body.fence, third.body.fence]);
  });

  it('a call naming an older grant of the same holder acts on nothing', async () => {
    const { id, ownerToken, a, b } = await workplace('job');
    const old = await lease(a, 'claim', { subject: 'job' });
    expect((await lease(a, 'release', { subject: 'job', fence: old.body.fence })).status).toBe(200);
    const current = await lease(a, 'claim', { subject: 'job', lease_duration_seconds: 60 });
    const before = (await readFeed(server.base, id, ownerToken)).length;

    // The zombie: the same holder's late release/complete/reject/renew of its earlier grant.
    for (const action of ['release', 'complete', 'reject', 'renew']) {
      const stale = await lease(a, action, { subject: 'job', fence: old.body.fence });
      expect({ action, status: stale.status, code: stale.body.code, holder: stale.body.holder, fence: stale.body.fence }).toEqual({
        action,
        status: 409,
        code: 'LEASE_LOST',
        holder: `sub:${a.id}`,
        fence: current.body.fence,
      });
      expect(stale.body.error).toContain(`Fence ${old.body.fence}`);
    }
    // Still held by A's current grant: B is refused, and only refusals were recorded meanwhile.
    const held = await lease(b, 'claim', { subject: 'job' });
    expect(held.body).toMatchObject({ code: 'LEASE_HELD', holder: `sub:${a.id}` });
    // (readFeed subscribes a reader, which records one `subscribed` each time.)
    const after = (await readFeed(server.base, id, ownerToken)).slice(before).filter((o) => o.type !== vigilType('subscribed'));
    expect(after.map((o) => o.type)).toEqual(Array(5).fill(vigilType('rejected')));
    // The current token works.
    const done = await lease(a, 'complete', { subject: 'job', fence: current.body.fence });
    expect(done.status).toBe(200);
    expect(done.body.lease).toMatchObject({ state: 'completed', fence: current.body.fence });
    // Repeating the complete with the same token answers the same; with the old one it is refused.
    expect((await lease(a, 'complete', { subject: 'job', fence: current.body.fence })).body.seq).toBe(done.body.seq);
    expect((await lease(a, 'complete', { subject: 'job', fence: old.body.fence })).body.code).toBe('LEASE_LOST');
  });

  it('without a fence a call is judged by its holder, as for base clients', async () => {
    const { a } = await workplace('job');
    await lease(a, 'claim', { subject: 'job' });
    expect((await lease(a, 'renew', { subject: 'job' })).status).toBe(200);
    expect((await lease(a, 'complete', { subject: 'job' })).status).toBe(200);
  });

  it('a fence that is not a whole number is refused naming the field', async () => {
    const { a } = await workplace('job');
    await lease(a, 'claim', { subject: 'job' });
    for (const fence of [-1, 0, 1.5, 'x', null]) {
      const reply = await lease(a, 'release', { subject: 'job', fence });
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe('INVALID');
      expect(reply.body.error).toContain('fence');
    }
  });
});
