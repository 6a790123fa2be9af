// Issue 31 point 5: webhooks that follow a monitor. A registration of
// `monitor.observation` names a monitor (and optionally types); each
// observation the monitor stores reaches the receiver signed, retried on the
// §6 schedule like every other event, its body the observation.
import { afterEach, describe, expect, it } from 'vitest';
import { call, createMonitor, subscribe } from '../support/client.ts';
import { immediateTimers, makeKey, useCloudServer } from './fixtures.ts';
import { type Receiver, startReceiver } from './receiver.ts';

const secret = 'a-secret-of-24-characters';
const timers = immediateTimers();
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

describe('webhooks on monitor.observation', () => {
  const server = useCloudServer({ cloud: { allowInsecureWebhooks: true, timers } });
  const base = () => `${server.url}/mp/v0`;
  const register = (key: string, body: Record<string, unknown>) =>
    call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'monitor.observation', secret, ...body } });

  it('checks monitor, token and types, naming the field; a monitor that is not public needs its token', async () => {
    const key = await makeKey(server.url);
    const url = 'http://127.0.0.1:9/hook';
    const { id: hidden, ownerToken } = await createMonitor(base(), { visibility: 'private' });
    expect((await register(key, { url })).body).toMatchObject({ code: 'INVALID', field: 'monitor' });
    expect((await register(key, { url, monitor: hidden })).status).toBe(404);
    expect((await register(key, { url, monitor: hidden, token: 'vgo_wrong' })).status).toBe(404);
    expect((await register(key, { url, monitor: hidden, token: ownerToken, types: [] })).body).toMatchObject({ code: 'INVALID', field: 'types' });
    expect((await register(key, { url, monitor: hidden, token: ownerToken, extra: 1 })).body).toMatchObject({ code: 'INVALID', field: 'extra' });
    const made = await register(key, { url, monitor: hidden, token: ownerToken, types: ['ci.*'] });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toEqual({ id: expect.stringMatching(/^wh_/), event: 'monitor.observation', url, monitor: hidden, types: ['ci.*'] });
    const listed = (await call(server.url, 'GET', '/v1/webhooks', { token: key })).body;
    expect(listed).toEqual([expect.objectContaining({ id: made.body.id, monitor: hidden, types: ['ci.*'] })]);
    expect(JSON.stringify(listed)).not.toContain(ownerToken);
    // The product events take no monitor, and only the server emits monitor.observation.
    const product = await call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'cir.capture', url, secret, monitor: hidden } });
    expect(product.body).toMatchObject({ code: 'INVALID', field: 'monitor' });
    const forged = await call(server.url, 'POST', '/v1/events', { token: key, body: { type: 'monitor.observation', data: {} } });
    expect(forged.body).toMatchObject({ code: 'INVALID', field: 'type' });
  });

  it('delivers each matching observation the monitor stores, signed, retried, and stops once deleted', async () => {
    const key = await makeKey(server.url);
    const r = await startReceiver(secret);
    receivers.push(r);
    const { id: monitor, ownerToken } = await createMonitor(base(), { visibility: 'public' });
    const hook = (await register(key, { url: r.url, monitor, types: ['ci.build.*'] })).body;
    const publish = (body: Record<string, unknown>) => call(base(), 'POST', `/monitors/${monitor}/observations`, { token: ownerToken, body });

    r.answers.push(503);
    timers.delays.length = 0;
    const failed = await publish({ type: 'ci.build.failed', subject: 'job-7', data: { ok: false } });
    await publish({ type: 'deploy.done', subject: 'prod' });
    await subscribe(base(), { monitor, subscriber: 'agent:bookkeeping' });
    await r.waitFor(2);
    const cloud = server.server.cloud!;
    await cloud.queue.idle();
    expect(timers.delays.filter((d) => d > 0)).toEqual([5_000]);
    expect(r.received.every((x) => x.verified)).toBe(true);
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
    const body = r.received[1]!.body;
    expect(body).toMatchObject({
      type: 'monitor.observation',
      data: { id: String(failed.body.seq), source: `monitor:${monitor}`, type: 'ci.build.failed', subject: 'job-7', data: { ok: false, provenance: { actor: 'agent:owner' } } },
    });
    const log = await call(server.url, 'GET', `/v1/webhooks/${hook.id}/deliveries`, { token: key });
    expect(log.body.deliveries).toEqual([expect.objectContaining({ event: 'monitor.observation', status: 'delivered', attempts: 2, response_code: 200 })]);

    expect((await call(server.url, 'DELETE', `/v1/webhooks/${hook.id}`, { token: key })).body).toEqual({ deleted: true });
    await publish({ type: 'ci.build.passed', subject: 'job-8' });
    await cloud.store.settled();
    await cloud.queue.idle();
    expect(cloud.queue.pendingCount).toBe(0);
    expect(r.received).toHaveLength(2);
  });
});
