// Issue 15 point 2: replies are bounded by bytes, not only by count. A pull
// page stops early once it holds about a megabyte (its `next` still exact),
// JSON-RPC batches are capped in calls and in reply bytes, and 50 concurrent
// pulls of megabyte observations keep the server's memory bounded.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { useServer } from '../http/fixtures.ts';
import { scaled } from '../support/time-scale.ts';

const big = (n: number, fill = 'x') => fill.repeat(n);
const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

describe.each(transports)('reply size limits over %s', (transport) => {
  const server = useServer({ transport, args: ['--max-body', String(2 * 1024 * 1024)] });

  async function monitorWithBig(count: number, size: number) {
    const m = await createMonitor(server.base);
    for (let i = 0; i < count; i++) {
      const reply = await publish(server.base, m.id, m.ownerToken, { type: 'app.blob', subject: `b${i}`, data: { blob: big(size) } });
      expect(reply.status).toBe(201);
    }
    return m;
  }

  it('stops a page early by bytes, with an exact next, and never returns an empty page while matches remain', async () => {
    const m = await monitorWithBig(4, 600_000);
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: 'pages', filter: { types: 'app.blob' } }, m.ownerToken);
    const discover = await call(server.base, 'GET', '/discover');
    expect(discover.body.limits).toMatchObject({ max_page_bytes: 1048576, max_batch_calls: 100, max_batch_reply_bytes: 4194304 });
    const seen: string[] = [];
    let cursor = 1;
    for (let pages = 0; pages < 10 && seen.length < 4; pages++) {
      const page = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?limit=1000&cursor=${cursor}`, { token: sub.token });
      expect(page.status).toBe(200);
      expect(page.body.observations.length).toBeGreaterThanOrEqual(1);
      expect(page.body.observations.length).toBeLessThanOrEqual(1);
      const last = page.body.observations.at(-1);
      seen.push(...page.body.observations.map((o: any) => o.subject));
      // A page cut by bytes ends right after its last observation; the last page has examined up to head.
      if (seen.length < 4) expect(page.body.next).toBe(Number(last.id) + 1);
      else expect(page.body.next).toBe(page.body.head + 1);
      cursor = page.body.next;
    }
    expect(seen).toEqual(['b0', 'b1', 'b2', 'b3']);
  });

  it('caps JSON-RPC batches by calls and by reply bytes', async () => {
    const m = await monitorWithBig(6, 900_000);
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: 'batch' }, m.ownerToken);
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'monitors/discover' }));
    const refused = await call(server.base, 'POST', '/rpc', { body: tooMany });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: -32600, data: { code: 'TOO_LARGE', limit: 100 } });
    const pulls = Array.from({ length: 8 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'feeds/pull',
      params: { subscription: sub.id, bearer: sub.token, cursor: 2 + i, limit: 1 },
    }));
    const reply = await call(server.base, 'POST', '/rpc', { body: pulls });
    expect(reply.status).toBe(200);
    expect(reply.body).toHaveLength(8);
    const answered = reply.body.filter((r: any) => r.result);
    const cut = reply.body.filter((r: any) => r.error);
    expect(answered.length).toBeGreaterThanOrEqual(1);
    expect(answered.length).toBeLessThan(8);
    for (const r of cut) expect(r.error.data).toMatchObject({ code: 'TOO_LARGE', limit_bytes: 4194304 });
    expect(JSON.stringify(reply.body).length).toBeLessThan(4194304 + 1_100_000);
  });

  it('keeps memory bounded under 50 concurrent pulls of megabyte observations', async () => {
    const m = await monitorWithBig(30, 1_000_000);
    const subs = await Promise.all(Array.from({ length: 50 }, (_, i) => subscribe(server.base, { monitor: m.id, subscriber: `rss-${i}` }, m.ownerToken)));
    const before = peakRssMb(server.server.child.pid!);
    const replies = await Promise.all(subs.map((s) => call(server.base, 'GET', `/subscriptions/${s.id}/pull?limit=1000`, { token: s.token })));
    for (const r of replies) expect(r.status).toBe(200);
    const after = peakRssMb(server.server.child.pid!);
    // Unbounded pages would need 50 × 30 MB several times over; bounded ones a few hundred MB at most.
    expect(after - before, `peak RSS grew from ${before} MB to ${after} MB`).toBeLessThan(500);
  }, scaled(120_000));
});
