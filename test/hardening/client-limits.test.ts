// Issue 15 point 6: anonymous abuse is bounded per client address. Monitor
// creation and anonymous subscriptions are rate-limited (429 OVER_BUDGET with
// retry_after_s) and capped; refused anonymous writes beyond a small rate are
// counted, not stored one row each. The limits are given with --client-limits;
// --client-limits-loopback applies them to loopback clients too (as here).
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { headOf, useServer } from '../http/fixtures.ts';

const limits = 'creates_per_minute=5,monitors_per_client=8,subscribes_per_minute=4,subscriptions_per_client=6,refusals_recorded_per_minute=3';

describe.each(transports)('per-client limits over %s', (transport) => {
  const server = useServer({ transport, args: ['--client-limits', limits, '--client-limits-loopback'] });

  it('rate-limits and caps monitor creation per client address', async () => {
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

  it('rate-limits anonymous subscriptions but not the owner', async () => {
    // The create budget of this address was spent above: wait for it to refill (the owner is never limited).
    const m = await createMonitorOrSkip();
    if (!m) return;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(server.base, 'POST', '/subscriptions', { body: { monitor: m.id, subscriber: `anon-${i}` } })).status);
    expect(statuses.filter((s) => s === 201).length).toBe(4);
    expect(statuses.at(-1)).toBe(429);
    for (let i = 0; i < 6; i++) expect((await subscribe(server.base, { monitor: m.id, subscriber: `own-${i}` }, m.ownerToken)).reply.status).toBe(201);
  });

  it('stores the first refused anonymous writes and counts the rest', async () => {
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
