// Issue 42 point 10: what one API key's events may cost. One 64 KiB event
// fanned out to 2,000 registrations (131 MB sent in 3 s) while the cap on
// queued bytes counted its body once. Now registrations are capped per event
// (the fan-out of one event), per URL and per host; the bytes waiting are
// counted per delivery; and POST /v1/events is rate-limited per key (here on
// a clock the test moves).
import { describe, expect, it } from 'vitest';
import type { DeliveryTimers } from '../../src/cloud/delivery-queue.ts';
import { call, createMonitor } from '../support/client.ts';
import { makeKey, useCloudServer } from './fixtures.ts';
import { startReceiver } from './receiver.ts';

const secret = 'a-secret-of-24-characters';

/** A clock the test moves; first attempts run at once, retries never (the receivers stay down). */
function manualClock(): DeliveryTimers & { advance(ms: number): void } {
  let now = Date.now();
  return {
    now: () => now,
    after(ms, run) {
      if (ms > 0) return () => {};
      const timer = setTimeout(run, 0);
      return () => clearTimeout(timer);
    },
    advance(ms) {
      now += ms;
    },
  };
}

describe('webhook registrations are capped per event, per URL and per host', () => {
  const server = useCloudServer({ cloud: { allowInsecureWebhooks: true, webhookLimits: { fanout_per_event: 3, registrations_per_url: 2, registrations_per_host: 4 } } });
  const register = (key: string, body: Record<string, unknown>) => call(server.url, 'POST', '/v1/webhooks', { token: key, body: { secret, ...body } });

  it('refuses the registration past each cap with 429, naming the limit and the field', async () => {
    const key = await makeKey(server.url);
    const at = (path: string, host = '127.0.0.1') => `http://${host}:9/${path}`;
    expect((await register(key, { event: 'cir.capture', url: at('a') })).status).toBe(201);
    expect((await register(key, { event: 'training.ingested', url: at('a') })).status).toBe(201);
    const sameUrl = await register(key, { event: 'usage.limit_reached', url: at('a') });
    expect(sameUrl.status).toBe(429);
    expect(sameUrl.body).toEqual({
      code: 'OVER_BUDGET',
      field: 'url',
      limit: 'registrations_per_url',
      limit_value: 2,
      error: `This API key already has 2 registrations to ${at('a')}, the most allowed (registrations_per_url 2); delete some first.`,
    });
    expect((await register(key, { event: 'cir.capture', url: at('b') })).status).toBe(201);
    expect((await register(key, { event: 'cir.capture', url: 'http://localhost:9/c' })).status).toBe(201);
    const fanout = await register(key, { event: 'cir.capture', url: 'http://localhost:9/d' });
    expect(fanout.body).toMatchObject({ code: 'OVER_BUDGET', field: 'event', limit: 'fanout_per_event', limit_value: 3 });
    expect(fanout.body.error).toContain('3 registrations of cir.capture');
    // Another port is the same host.
    expect((await register(key, { event: 'usage.limit_reached', url: 'http://127.0.0.1:10/e' })).status).toBe(201);
    const sameHost = await register(key, { event: 'usage.limit_reached', url: at('f') });
    expect(sameHost.body).toMatchObject({ code: 'OVER_BUDGET', field: 'url', limit: 'registrations_per_host', limit_value: 4 });
    expect(sameHost.body.error).toContain('4 registrations to the host 127.0.0.1');

    // Followers of one monitor count as one event's fan-out; another monitor is another event.
    const base = `${server.url}/mp/v0`;
    const [first, second] = [await createMonitor(base, { visibility: 'public' }), await createMonitor(base, { visibility: 'public' })];
    const follow = (monitor: string, path: string) => register(key, { event: 'monitor.observation', url: `http://[::1]:9/${path}`, monitor });
    for (const path of ['m1', 'm2', 'm3']) expect((await follow(first.id, path)).status).toBe(201);
    expect((await follow(first.id, 'm4')).body).toMatchObject({ limit: 'fanout_per_event' });
    expect((await follow(first.id, 'm4')).body.error).toContain(`following monitor "${first.id}"`);
    expect((await follow(second.id, 'm4')).status).toBe(201);
    // Deleting one makes room again.
    const mine = (await call(server.url, 'GET', '/v1/webhooks', { token: key })).body as Array<{ id: string; url: string }>;
    await call(server.url, 'DELETE', `/v1/webhooks/${mine.find((w) => w.url === at('a'))!.id}`, { token: key });
    expect((await register(key, { event: 'usage.limit_reached', url: at('a') })).status).toBe(201);
  });
});

describe('queued bytes per delivery and events per minute', () => {
  const clock = manualClock();
  const server = useCloudServer({
    cloud: { allowInsecureWebhooks: true, timers: clock, maxQueuedEventBytes: 150_000, webhookLimits: { registrations_per_url: 10, registrations_per_host: 10, events_per_minute: 5 } },
  });

  it('counts an event once per registration it is sent to, and refuses events past the key\'s rate', async () => {
    const receiver = await startReceiver(secret);
    receiver.answers = new Array(1000).fill(503);
    try {
      const key = await makeKey(server.url);
      for (let i = 0; i < 10; i++) expect((await call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'cir.capture', url: receiver.url, secret } })).status).toBe(201);
      const event = (bytes: number) => ({ type: 'cir.capture', data: { blob: 'x'.repeat(bytes) } });
      const send = (bytes: number) => call(server.url, 'POST', '/v1/events', { token: key, body: event(bytes) });
      // 20 KB to 10 registrations is 200 KB to send: past the 150 KB cap, though its body is 20 KB.
      const big = await send(20_000);
      expect(big.status).toBe(429);
      expect(big.body).toMatchObject({ code: 'OVER_BUDGET', queued_bytes: 0, limit_bytes: 150_000 });
      expect(big.body.error).toContain('to 10 registrations');
      expect((await send(10_000)).body).toEqual({ deliveries: 10 });
      await receiver.waitFor(10);
      const second = await send(10_000);
      expect(second.status).toBe(429);
      expect(second.body.queued_bytes).toBeGreaterThan(100_000);

      // Five events a minute per key; then 429 until the bucket refills.
      const other = await makeKey(server.url, 'other');
      const empty = () => call(server.url, 'POST', '/v1/events', { token: other, body: { type: 'training.ingested', data: {} } });
      for (let i = 0; i < 5; i++) expect((await empty()).status).toBe(202);
      const limited = await empty();
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({
        code: 'OVER_BUDGET',
        limit: 'events_per_minute',
        limit_value: 5,
        retry_after_s: 12,
        error: 'This API key may send 5 events per minute; try again in 12 s.',
      });
      clock.advance(12_000);
      expect((await empty()).status).toBe(202);
      expect((await empty()).status).toBe(429);
    } finally {
      await receiver.close();
    }
  });
});
