// Webhook fan-out stores an event's body once: 50 registrations of one key
// get the same 60 KB body, signed, from one stored copy; the bytes a key has
// waiting for delivery are capped, counted per delivery (429 past the cap,
// counted again after a restart), and a body is let go once its last delivery
// is finished.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server.ts';
import { call } from '../support/client.ts';
import { tempDir } from '../support/server-process.ts';
import { adminToken, makeKey } from './fixtures.ts';
import { type Receiver, startReceiver } from './receiver.ts';
import { untilTrue } from '../support/until.ts';

const secret = 'fan-out-secret-0123456789';
// Two events of 60 KB to 50 registrations are 6 MB to send; a third passes the cap.
const cap = 7_000_000;
const dir = tempDir('vigil-fanout-');
let server: RunningServer | undefined;
let receiver: Receiver | undefined;
afterAll(async () => {
  await server?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = () =>
  startServer({ port: 0, transport: 'node', allowAdmin: adminToken, state: join(dir, 'state.db'), cloud: { allowInsecureWebhooks: true, maxQueuedEventBytes: cap, webhookLimits: { registrations_per_url: 50, registrations_per_host: 50 } }, log: () => undefined });

const stored = (s: RunningServer) => {
  const row = (sql: string) => s.service.store.driver.prepare(sql).get<Record<string, number | null>>([])!;
  return {
    bodies: row('SELECT COUNT(*) AS n FROM cloud_event_bodies').n,
    bodyBytes: row('SELECT COALESCE(SUM(LENGTH(body)), 0) AS n FROM cloud_event_bodies').n,
    payloadBytes: row('SELECT COALESCE(SUM(LENGTH(payload)), 0) AS n FROM cloud_deliveries').n,
    pending: row("SELECT COUNT(*) AS n FROM cloud_deliveries WHERE status = 'pending'").n,
  };
};

describe('webhook fan-out storage', () => {
  it('stores one body for 50 registrations, caps the bytes a key has queued, and lets bodies go once delivered', { timeout: 180_000 }, async () => {
    receiver = await startReceiver(secret);
    receiver.answers = new Array(10_000).fill(503);
    server = await start();
    const key = await makeKey(server.url, 'fan-out');
    for (let i = 0; i < 50; i++) {
      const made = await call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'cir.capture', url: receiver.url, secret } });
      expect(made.status).toBe(201);
    }
    const blob = 'x'.repeat(60_000);
    const event = { type: 'cir.capture', data: { blob } };
    expect((await call(server.url, 'POST', '/v1/events', { token: key, body: event })).body).toEqual({ deliveries: 50 });
    const first = stored(server);
    expect(first).toMatchObject({ bodies: 1, payloadBytes: 0, pending: 50 });
    expect(first.bodyBytes).toBeGreaterThan(60_000);
    expect(first.bodyBytes).toBeLessThan(61_000);

    // Every registration still gets the whole body, signed.
    const received = await receiver.waitFor(50);
    expect(received.slice(0, 50).every((r) => r.verified && r.body.data.blob === blob)).toBe(true);

    expect((await call(server.url, 'POST', '/v1/events', { token: key, body: event })).status).toBe(202);
    const over = await call(server.url, 'POST', '/v1/events', { token: key, body: event });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: 'OVER_BUDGET', limit_bytes: cap });
    expect(over.body.error).toContain('--max-queued-event-bytes');
    expect(over.body.error).toContain('to 50 registrations');
    expect(stored(server)).toMatchObject({ bodies: 2, payloadBytes: 0, pending: 100 });
    // Another key is not held back by this one's queue.
    const other = await makeKey(server.url, 'other');
    expect((await call(server.url, 'POST', '/v1/events', { token: other, body: event })).body).toEqual({ deliveries: 0 });

    // After a restart the queue is counted again from the store.
    await server.close();
    server = await start();
    expect((await call(server.url, 'POST', '/v1/events', { token: key, body: event })).status).toBe(429);

    // The receiver recovers: every delivery arrives on its retry, the bodies go, and events are taken again.
    receiver.answers = [];
    let last: unknown;
    await untilTrue(
      () => `every delivery to finish; last: ${JSON.stringify(last)}`,
      () => {
        const s = stored(server!);
        last = s;
        return s.pending === 0 && s.bodies === 0;
      },
      60_000,
    );
    expect(receiver.received.filter((r) => r.verified && r.body.data.blob === blob).length).toBeGreaterThanOrEqual(100);
    expect((await call(server.url, 'POST', '/v1/events', { token: key, body: event })).status).toBe(202);
  });
});
