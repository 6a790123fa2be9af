// Issue 42 point 8: revoking an API key leaves nothing of it running. Its
// workers answered, its crons fired and its `monitor.observation` followers
// received after the revocation, and no route let the admin remove them.
// Now revoking deletes its workers (rows, crons, runtimes) and disables its
// registrations; the admin lists and deletes any key's workers and
// registrations. Another key's worker and follower are the barrier: they go
// on, so what the revoked key's did not get would have arrived by then.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createMonitor } from '../support/client.ts';
import { edgeFetch } from '../support/edge.ts';
import { untilTrue } from '../support/until.ts';
import { adminToken, makeKey, useCloudServer } from './fixtures.ts';
import { type Receiver, startReceiver } from './receiver.ts';

const secret = 'a-secret-of-24-characters';

describe('revoking an API key', { timeout: 180_000 }, () => {
  const server = useCloudServer({ cloud: { allowInsecureWebhooks: true, allowPrivateWorkers: true } });
  // Where the workers' crons report: one hit per scheduled run, by worker.
  const cronHits = new Map<string, number>();
  let tally: Server;
  let tallyUrl = '';
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    tally = createServer((req, res) => {
      const name = (req.url ?? '').slice(1);
      cronHits.set(name, (cronHits.get(name) ?? 0) + 1);
      res.end('ok');
    });
    await new Promise<void>((done) => tally.listen(0, '127.0.0.1', done));
    tallyUrl = `http://127.0.0.1:${(tally.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await new Promise((done) => tally.close(done));
  });

  const workerScript = (name: string) => `export default {
    async scheduled() { await fetch('${tallyUrl}/${name}'); },
    async fetch() { return new Response('${name} answers'); },
  };`;

  it('deletes its workers and their crons, disables its followers, and the admin sees and deletes the rest', async () => {
    const [doomed, kept] = [await makeKey(server.url, 'doomed'), await makeKey(server.url, 'kept')];
    const keyId = (await call(server.url, 'GET', '/v1/api-keys', { token: adminToken })).body.keys.find((k: { name: string }) => k.name === 'doomed').id;
    for (const [key, name] of [
      [doomed, 'doomed-site'],
      [kept, 'kept-site'],
    ] as const) {
      const deployed = await call(server.url, 'PUT', `/v1/workers/${name}`, { token: key, body: { script: workerScript(name), crons: ['* * * * * *'] } });
      expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    }
    const edge = (name: string) => edgeFetch(`http://${name}.localhost:${server.server.edgePort}/`);
    expect((await edge('doomed-site')).text).toBe('doomed-site answers');
    await untilTrue('both crons to run', () => (cronHits.get('doomed-site') ?? 0) > 0 && (cronHits.get('kept-site') ?? 0) > 0);

    const base = `${server.url}/mp/v0`;
    const { id: monitor, ownerToken } = await createMonitor(base, { visibility: 'public' });
    const [doomedHook, keptHook] = [await startReceiver(secret), await startReceiver(secret)];
    receivers.push(doomedHook, keptHook);
    const follow = (key: string, url: string) => call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'monitor.observation', url, secret, monitor } });
    const doomedRegistration = (await follow(doomed, doomedHook.url)).body;
    expect(doomedRegistration.id).toMatch(/^wh_/);
    expect((await follow(kept, keptHook.url)).status).toBe(201);
    const publish = (n: number) => call(base, 'POST', `/monitors/${monitor}/observations`, { token: ownerToken, body: { type: 'ci.build', data: { n } } });
    await publish(1);
    await doomedHook.waitFor(1);
    await keptHook.waitFor(1);

    const revoked = await call(server.url, 'DELETE', `/v1/api-keys/${keyId}`, { token: adminToken });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ revoked: true, workers_deleted: ['doomed-site'], webhooks_disabled: 1 });
    const cronsAtRevocation = cronHits.get('doomed-site') ?? 0;

    // Its worker no longer answers, on any path.
    const gone = await edge('doomed-site');
    expect(gone.status).toBe(404);
    expect(gone.json().error).toBe('No worker "doomed-site" is deployed on this edge.');
    // The kept key's follower gets the next observation and its cron runs twice more; the revoked key's get nothing.
    await publish(2);
    await keptHook.waitFor(2);
    const keptCrons = cronHits.get('kept-site') ?? 0;
    await untilTrue('the kept cron to run twice more', () => (cronHits.get('kept-site') ?? 0) >= keptCrons + 2);
    await server.server.cloud!.queue.idle();
    expect(doomedHook.received.map((r) => r.body.data.data.n)).toEqual([1]);
    expect(cronHits.get('doomed-site') ?? 0).toBeLessThanOrEqual(cronsAtRevocation + 1); // at most a run already in flight

    // The admin sees every key's workers and registrations, and deletes them.
    const workers = await call(server.url, 'GET', '/v1/admin/workers', { token: adminToken });
    expect(workers.body.workers.map((w: { name: string; key_id: string; running: boolean }) => w.name)).toEqual(['kept-site']);
    expect(workers.body.workers[0]).toMatchObject({ name: 'kept-site', key_id: expect.stringMatching(/^key_/), running: true });
    const hooks = (await call(server.url, 'GET', '/v1/admin/webhooks', { token: adminToken })).body.webhooks;
    expect(hooks.find((h: { id: string }) => h.id === doomedRegistration.id)).toMatchObject({ key_id: keyId, active: 'false', monitor });
    expect((await call(server.url, 'GET', '/v1/admin/workers', { token: kept })).status).toBe(401);
    expect((await call(server.url, 'DELETE', '/v1/admin/workers/kept-site', { token: adminToken })).body).toEqual({ deleted: true });
    expect((await edge('kept-site')).status).toBe(404);
    expect((await call(server.url, 'GET', '/v1/workers', { token: kept })).body).toEqual([]);
    expect((await call(server.url, 'DELETE', `/v1/admin/webhooks/${doomedRegistration.id}`, { token: adminToken })).body).toEqual({ deleted: true });
    expect((await call(server.url, 'DELETE', '/v1/admin/workers/no-such', { token: adminToken })).status).toBe(404);
    // Revoking again finishes any cleanup and says nothing is left.
    expect((await call(server.url, 'DELETE', `/v1/api-keys/${keyId}`, { token: adminToken })).body).toEqual({ revoked: true, workers_deleted: [], webhooks_disabled: 0 });
  });
});
