// The cloud API's webhooks over real sockets: API keys, registration rules,
// signed deliveries checked by the standardwebhooks verifier, retries on the
// §6 schedule and the delivery log.
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { immediateTimers, makeKey, useCloudServer } from './fixtures.ts';
import { type Receiver, startReceiver } from './receiver.ts';

const secret = 'a-secret-of-24-characters';
const timers = immediateTimers();
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
async function receiver(s = secret) {
  const r = await startReceiver(s);
  receivers.push(r);
  return r;
}

describe.each(transports)('API keys over %s', (transport) => {
  const server = useCloudServer({ transport, cloud: { allowInsecureWebhooks: true, timers } });

  it('refuses a missing, wrong or revoked key with the error model', async () => {
    for (const token of [undefined, 'vk_wrong', 'not-a-key']) {
      const reply = await call(server.url, 'GET', '/v1/webhooks', { token });
      expect(reply.status).toBe(401);
      expect(reply.body.code).toBe('UNAUTHORIZED');
      expect(reply.body.error).toMatch(/API key/);
    }
    const key = await makeKey(server.url);
    expect(key).toMatch(/^vk_[A-Za-z0-9_-]{40,}$/);
    expect((await call(server.url, 'GET', '/v1/webhooks', { token: key })).status).toBe(200);
    const listed = await call(server.url, 'GET', '/v1/api-keys', { token: 'adminToken' });
    expect(listed.status).toBe(401);
    const keys = (await call(server.url, 'GET', '/v1/api-keys', { token: 'admin-token-for-cloud-tests' })).body.keys;
    expect(JSON.stringify(keys)).not.toContain(key);
    const id = keys.at(-1).id;
    expect((await call(server.url, 'DELETE', `/v1/api-keys/${id}`, { token: 'admin-token-for-cloud-tests' })).body).toEqual({ revoked: true, workers_deleted: [], webhooks_disabled: 0 });
    expect((await call(server.url, 'GET', '/v1/webhooks', { token: key })).status).toBe(401);
  });

  it('answers an unknown route and a wrong method with NOT_FOUND', async () => {
    const key = await makeKey(server.url);
    const reply = await call(server.url, 'GET', '/v1/nothing', { token: key });
    expect(reply.status).toBe(404);
    expect(reply.body.code).toBe('NOT_FOUND');
    expect((await call(server.url, 'PUT', '/v1/webhooks', { token: key })).body.error).toMatch(/answers POST, GET/);
  });
});

describe('webhook registration', () => {
  const server = useCloudServer({ cloud: { allowInsecureWebhooks: true, timers } });
  const strict = useCloudServer({ cloud: { timers } });

  it('checks event, secret and url, naming the field', async () => {
    const key = await makeKey(server.url);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ event: 'cir.nope', url: 'http://127.0.0.1:1/x', secret }, 'event'],
      [{ event: 'cir.capture', url: 'http://127.0.0.1:1/x', secret: 'short' }, 'secret'],
      [{ event: 'cir.capture', url: 'ftp://127.0.0.1/x', secret }, 'url'],
      [{ event: 'cir.capture', url: 'http://example.com/x', secret }, 'url'],
      [{ event: 'cir.capture', url: 'not a url', secret }, 'url'],
      [{ event: 'cir.capture', url: 'https://127.0.0.1/x', secret, extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const reply = await call(server.url, 'POST', '/v1/webhooks', { token: key, body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body).toMatchObject({ code: 'INVALID', field });
    }
  });

  it('without --allow-insecure-webhooks refuses plain http and private, loopback and link-local addresses', async () => {
    const key = await makeKey(strict.url);
    for (const url of ['http://127.0.0.1:9/x', 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://169.254.169.254/latest', 'https://[::1]/x', 'https://[fe80::1]/x', 'https://192.168.1.1/', 'https://localhost/x']) {
      const reply = await call(strict.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'cir.capture', url, secret } });
      expect(reply.status, url).toBe(400);
      expect(reply.body.field).toBe('url');
    }
    const ok = await call(strict.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'cir.capture', url: 'https://93.184.215.14/hook', secret } });
    expect(ok.status).toBe(201);
  });

  it('registers, lists only the caller\'s registrations and deletes', async () => {
    const [alice, bob] = [await makeKey(server.url, 'alice'), await makeKey(server.url, 'bob')];
    const made = await call(server.url, 'POST', '/v1/webhooks', { token: alice, body: { event: 'training.ingested', url: 'http://127.0.0.1:9/a', secret } });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ id: expect.stringMatching(/^wh_[0-9a-f-]{36}$/), event: 'training.ingested', url: 'http://127.0.0.1:9/a' });
    const list = await call(server.url, 'GET', '/v1/webhooks', { token: alice });
    expect(list.body).toEqual([{ id: made.body.id, event: 'training.ingested', url: 'http://127.0.0.1:9/a', active: 'true', created_at: expect.any(String) }]);
    expect((await call(server.url, 'GET', '/v1/webhooks', { token: bob })).body).toEqual([]);
    expect((await call(server.url, 'DELETE', `/v1/webhooks/${made.body.id}`, { token: bob })).status).toBe(404);
    expect((await call(server.url, 'DELETE', `/v1/webhooks/${made.body.id}`, { token: alice })).body).toEqual({ deleted: true });
    expect((await call(server.url, 'GET', '/v1/webhooks', { token: alice })).body).toEqual([]);
  });
});

describe('deliveries', () => {
  const server = useCloudServer({ cloud: { allowInsecureWebhooks: true, timers } });

  it('test sends a signed delivery and reports WebhookTestResult', async () => {
    const key = await makeKey(server.url);
    const r = await receiver();
    const { body } = await call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'cir.capture', url: r.url, secret } });
    const result = await call(server.url, 'POST', `/v1/webhooks/${body.id}/test`, { token: key });
    expect(result.body).toEqual({ delivered: true, response_code: 200 });
    expect(r.received[0]!.verified).toBe(true);
    expect(r.received[0]!.body).toMatchObject({ type: 'webhook.test', data: { webhook_id: body.id } });
    r.answers.push(503);
    expect((await call(server.url, 'POST', `/v1/webhooks/${body.id}/test`, { token: key })).body).toEqual({
      delivered: false,
      response_code: 503,
      error: 'the receiver answered 503',
    });
  });

  it('a wrong secret fails the library\'s verification', async () => {
    const key = await makeKey(server.url);
    const r = await receiver('another-secret-16+chars');
    const { body } = await call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'cir.capture', url: r.url, secret } });
    await call(server.url, 'POST', `/v1/webhooks/${body.id}/test`, { token: key });
    expect(r.received[0]).toMatchObject({ verified: false, error: 'No matching signature found' });
  });

  it('events fan out to the caller\'s registrations of that event, signed, and retry on the §6 schedule', async () => {
    const key = await makeKey(server.url);
    const other = await makeKey(server.url, 'other');
    const r = await receiver();
    const hook = (await call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'cir.capture', url: r.url, secret } })).body;
    await call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'training.ingested', url: r.url, secret } });
    await call(server.url, 'POST', '/v1/webhooks', { token: other, body: { event: 'cir.capture', url: r.url, secret } });
    r.answers.push(500, 500, 500, 500, 500);
    timers.delays.length = 0;
    const sent = await call(server.url, 'POST', '/v1/events', { token: key, body: { type: 'cir.capture', data: { signal: { id: 's1', body: 'tests pass' } } } });
    expect(sent).toMatchObject({ status: 202, body: { deliveries: 1 } });
    await r.waitFor(6);
    await server.server.cloud!.queue.idle();
    expect(timers.delays.filter((d) => d > 0)).toEqual([5_000, 30_000, 120_000, 600_000, 3_600_000]);
    expect(r.received.every((x) => x.verified)).toBe(true);
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
    expect(r.received[0]!.body).toEqual({ type: 'cir.capture', timestamp: expect.any(String), data: { signal: { id: 's1', body: 'tests pass' } } });
    const log = await call(server.url, 'GET', `/v1/webhooks/${hook.id}/deliveries`, { token: key });
    expect(log.body.deliveries).toEqual([
      expect.objectContaining({ id: r.received[0]!.headers['webhook-id'], event: 'cir.capture', status: 'delivered', attempts: 6, response_code: 200 }),
    ]);
    expect((await call(server.url, 'GET', `/v1/webhooks/${hook.id}/deliveries`, { token: other })).status).toBe(404);
  });

  it('gives up after the last retry and records the failure', async () => {
    const key = await makeKey(server.url);
    const r = await receiver();
    const hook = (await call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'usage.limit_reached', url: r.url, secret } })).body;
    r.answers.push(500, 500, 500, 500, 500, 500, 500);
    await call(server.url, 'POST', '/v1/events', { token: key, body: { type: 'usage.limit_reached', data: { recipe: 'x' } } });
    await r.waitFor(6);
    await server.server.cloud!.queue.idle();
    const log = await call(server.url, 'GET', `/v1/webhooks/${hook.id}/deliveries`, { token: key });
    expect(log.body.deliveries[0]).toMatchObject({ status: 'failed', attempts: 6, response_code: 500, next_attempt_at: null });
    expect(r.received).toHaveLength(6);
    // Finished deliveries are forgotten once older than the log's window.
    const cloud = server.server.cloud!;
    cloud.store.pruneDeliveries(new Date(Date.now() + 30 * 86_400_000).toISOString());
    await cloud.store.settled();
    expect((await call(server.url, 'GET', `/v1/webhooks/${hook.id}/deliveries`, { token: key })).body.deliveries).toEqual([]);
  });

  it('refuses an unknown event type and a non-object data', async () => {
    const key = await makeKey(server.url);
    expect((await call(server.url, 'POST', '/v1/events', { token: key, body: { type: 'x', data: {} } })).body.field).toBe('type');
    expect((await call(server.url, 'POST', '/v1/events', { token: key, body: { type: 'cir.capture', data: [] } })).body.field).toBe('data');
    const huge = await call(server.url, 'POST', '/v1/events', { token: key, body: { type: 'cir.capture', data: { text: 'x'.repeat(70_000) } } });
    expect(huge.body).toMatchObject({ code: 'INVALID', field: 'data' });
    expect((await call(server.url, 'POST', '/v1/events', { token: key, rawBody: '{', headers: { 'content-type': 'application/json' } })).body.code).toBe('INVALID');
  });
});
