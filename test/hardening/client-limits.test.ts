// Issue 15 point 6: anonymous abuse is bounded per client address. Monitor
// creation and anonymous subscriptions are rate-limited (429 OVER_BUDGET with
// retry_after_s) and capped; refused anonymous writes beyond a small rate are
// counted, not stored one row each. The limits are given with --client-limits;
// --client-limits-loopback applies them to loopback clients too (as here).
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { networkOf } from '../../src/service/client-limits.ts';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { headOf, useServer } from '../http/fixtures.ts';

const limits = 'creates_per_minute=5,monitors_per_client=8,subscribes_per_minute=4,subscriptions_per_client=6,refusals_recorded_per_minute=3';

// The second test waits for the create budget to refill (seconds): the two transports' servers are
// tested at once, each one's tests in order.
describe.concurrent.each(transports)('per-client limits over %s', (transport) => {
  const server = useServer({ transport, args: ['--client-limits', limits, '--client-limits-loopback'] });

  it.sequential('rate-limits and caps monitor creation per client address', async () => {
    const created: number[] = [];
    let refusal: any;
    for (let i = 0; i < 7; i++) {
      const reply = await call(server.base, 'POST', '/monitors', { body: {} });
      created.push(reply.status);
      if (reply.status === 429) refusal = reply.body;
    }
    expect(created.filter((s) => s === 201).length).toBe(5);
    expect(created.filter((s) => s === 429).length).toBe(2);
    expect(refusal).toMatchObject({ code: 'OVER_BUDGET', limit: 'creates_per_minute', retry_after_s: expect.any(Number) });
    expect(refusal.error).toMatch(/5 .*per minute/);
  });

  it.sequential('rate-limits anonymous subscriptions but not the owner', async () => {
    // The create budget of this address was spent above: wait for it to refill (the owner is never limited).
    const m = await createMonitorOrSkip();
    if (!m) return;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(server.base, 'POST', '/subscriptions', { body: { monitor: m.id, subscriber: `anon-${i}` } })).status);
    expect(statuses.filter((s) => s === 201).length).toBe(4);
    expect(statuses.at(-1)).toBe(429);
    for (let i = 0; i < 6; i++) expect((await subscribe(server.base, { monitor: m.id, subscriber: `own-${i}` }, m.ownerToken)).reply.status).toBe(201);
  });

  it.sequential('stores the first refused anonymous writes and counts the rest', async () => {
    const m = await createMonitorOrSkip();
    if (!m) return;
    const before = await headOf(server.base, m.id, m.ownerToken);
    const replies = [];
    for (let i = 0; i < 10; i++) replies.push(await publish(server.base, m.id, 'vgo_not-a-token', { type: 'app.x', data: { pad: 'z'.repeat(1000) } }));
    for (const r of replies) expect(r.status).toBe(401);
    const recorded = replies.filter((r) => typeof r.body.rejected_seq === 'number');
    expect(recorded.length).toBe(3);
    expect(replies.filter((r) => r.body.rejected_recorded === false).length).toBe(7);
    expect(await headOf(server.base, m.id, m.ownerToken)).toBe(before + 3);
    const state = await call(server.base, 'GET', `/monitors/${m.id}/state`, { token: m.ownerToken });
    expect(state.body.counters.rejected).toBe(10);
    // The owner's own refusals are always stored.
    const own = await publish(server.base, m.id, m.ownerToken, { type: 'app.x', tier: 'gold' });
    expect(own.body.rejected_seq).toBeTypeOf('number');
  });

  /** The public monitor these tests share, created once this address's budget allows. */
  let shared: { id: string; ownerToken: string } | undefined;
  async function createMonitorOrSkip() {
    if (shared) return shared;
    for (let attempt = 0; attempt < 30 && !shared; attempt++) {
      const reply = await call(server.base, 'POST', '/monitors', { body: { visibility: 'public' } });
      if (reply.status === 201) shared = { id: reply.body.monitor.id, ownerToken: reply.body.owner_token };
      else await new Promise((done) => setTimeout(done, Math.max(1, reply.body.retry_after_s ?? 1) * 1000));
    }
    return shared;
  }
});

describe.each(transports)('per-client limits spare loopback by default over %s', (transport) => {
  const server = useServer({ transport, args: ['--client-limits', 'creates_per_minute=2'] });
  it('lets a loopback client create past the rate', async () => {
    for (let i = 0; i < 4; i++) await createMonitor(server.base);
  });
});

/** POST a JSON body from a chosen local address (loopback has all of 127/8 to speak from). */
function postFrom(localAddress: string, url: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((done, fail) => {
    const text = JSON.stringify(body);
    const req = httpRequest(url, { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      let answer = '';
      res.on('data', (c) => (answer += c));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: JSON.parse(answer) }));
    });
    req.on('error', fail);
    req.end(text);
  });
}

describe('per-client limits against rotating source addresses', () => {
  // Caps, not rates: a count refills with no clock, whatever this machine's load.
  const server = useServer({ transport: 'node', args: ['--client-limits', 'monitors_per_client=5,anonymous_monitors=8', '--client-limits-loopback'] });

  it('counts a /24 as one client, and everyone without a token against one budget', async () => {
    // 40 addresses of one /24 get one address's budget, not 40 of them.
    const sameNetwork: number[] = [];
    let refusal: any;
    for (let i = 2; i < 42; i++) {
      const reply = await postFrom(`127.0.0.${i}`, `${server.base}/monitors`, {});
      sameNetwork.push(reply.status);
      if (reply.status === 429) refusal ??= reply.body;
    }
    expect(sameNetwork.filter((s) => s === 201).length).toBe(5);
    expect(refusal).toMatchObject({ code: 'OVER_BUDGET', limit: 'monitors_per_client', limit_value: 5 });
    expect(refusal.error).toBe("This client's network (127.0.0.0/24) has made 5 monitors without a token, the most allowed (monitors_per_client 5).");
    // Other networks draw on the budget of everyone without a token: 3 are left of 8.
    const otherNetworks: number[] = [];
    for (let n = 1; n < 10; n++) {
      const reply = await postFrom(`127.0.${n}.1`, `${server.base}/monitors`, {});
      otherNetworks.push(reply.status);
      if (reply.status === 429) refusal = reply.body;
    }
    expect(otherNetworks.slice(0, 3)).toEqual([201, 201, 201]);
    expect(otherNetworks.slice(3).every((s) => s === 429)).toBe(true);
    expect(refusal).toMatchObject({ code: 'OVER_BUDGET', limit: 'anonymous_monitors', limit_value: 8 });
    expect(refusal.error).toBe('All clients without a token together have made 8 monitors, the most allowed (anonymous_monitors 8).');
  });
});

describe('the network a client address belongs to', () => {
  it.each([
    ['203.0.113.77', '203.0.113.0/24'],
    ['::ffff:198.51.100.9', '198.51.100.0/24'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:0:7::5', '2001:db8:0:7::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ])('%s is in %s', (address, network) => {
    expect(networkOf(address)).toBe(network);
  });
});
