// Issue 15 point 1: re-subscribing with a subscription's own token may keep
// or narrow what it holds, never widen it. Only the owner, the subscribe
// token or the admin token may grant more than default_grant.
import { describe, expect, it } from 'vitest';
import { call, subscribe } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { useServer } from '../http/fixtures.ts';

const admin = 'adm-escalation';

describe.each(transports)('capability escalation on re-subscribe over %s', (transport) => {
  const server = useServer({ transport, args: ['--allow-admin', admin] });

  async function publicMonitor() {
    const created = await call(server.base, 'POST', '/monitors', {
      body: { visibility: 'public', capabilities: ['observe', 'react', 'act'], subscribe_token: true },
    });
    expect(created.status).toBe(201);
    return { id: created.body.monitor.id as string, owner: created.body.owner_token as string, subscribeToken: created.body.subscribe_token as string };
  }

  it('refuses to widen an observe-only subscription with its own token', async () => {
    const m = await publicMonitor();
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: 'stranger' });
    expect(sub.reply.body.subscription.capabilities).toEqual(['observe']);
    const widen = await call(server.base, 'POST', '/subscriptions', {
      token: sub.token,
      body: { monitor: m.id, subscriber: 'stranger', capabilities: ['observe', 'act'] },
    });
    expect(widen.status).toBe(403);
    expect(widen.body).toMatchObject({ code: 'CAPABILITY_MISSING', granted: ['observe'] });
    expect(widen.body.error).toMatch(/owner|subscribe token|admin/);
    // The refused call changed nothing: the old token still works and still holds observe only.
    const pull = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull`, { token: sub.token });
    expect(pull.status).toBe(200);
    const claim = await call(server.base, 'POST', `/subscriptions/${sub.id}/leases/claim`, { token: sub.token, body: { subject: 'x' } });
    expect(claim.status).toBe(403);
  });

  it('lets the own token keep or narrow, and the owner, subscribe or admin token widen', async () => {
    const m = await publicMonitor();
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: 'worker', capabilities: ['observe', 'act'] }, m.owner);
    const keep = await subscribe(server.base, { monitor: m.id, subscriber: 'worker', capabilities: ['observe', 'act'] }, sub.token);
    expect(keep.reply.body.subscription.capabilities).toEqual(['observe', 'act']);
    const narrow = await subscribe(server.base, { monitor: m.id, subscriber: 'worker', capabilities: ['observe'] }, keep.token);
    expect(narrow.reply.body.subscription.capabilities).toEqual(['observe']);
    const back = await call(server.base, 'POST', '/subscriptions', {
      token: narrow.token,
      body: { monitor: m.id, subscriber: 'worker', capabilities: ['observe', 'act'] },
    });
    expect(back.status).toBe(403);
    // The subscribe token may grant anything to a new subscriber, but re-keying someone else's needs its token, the owner's or the admin's.
    const peer = await call(server.base, 'POST', '/subscriptions', {
      token: m.subscribeToken,
      body: { monitor: m.id, subscriber: 'worker', capabilities: ['observe', 'act'] },
    });
    expect(peer.status).toBe(401);
    const fresh = await subscribe(server.base, { monitor: m.id, subscriber: 'peer', capabilities: ['react'] }, m.subscribeToken);
    expect(fresh.reply.body.subscription.capabilities).toEqual(['react']);
    for (const token of [m.owner, admin]) {
      const widened = await call(server.base, 'POST', '/subscriptions', {
        token,
        body: { monitor: m.id, subscriber: 'worker', capabilities: ['observe', 'react', 'act'] },
      });
      expect(widened.status, JSON.stringify(widened.body)).toBe(201);
      expect(widened.body.subscription.capabilities).toEqual(['observe', 'react', 'act']);
      await subscribe(server.base, { monitor: m.id, subscriber: 'worker', capabilities: ['observe'] }, widened.body.token);
    }
  });
});
