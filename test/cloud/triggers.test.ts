// Inbound triggers: POST /v1/triggers/<monitor> publishes the body as an
// observation that a sentinel on the monitor reads, vars included.
import { describe, expect, it } from 'vitest';
import { call, createMonitor, replayAll, subscribe } from '../support/client.ts';
import { adminToken, makeKey, useCloudServer } from './fixtures.ts';

describe('inbound triggers', () => {
  const server = useCloudServer();

  it('publishes the body as an observation, type ai.vigil.trigger unless the body names one', async () => {
    const base = `${server.url}/mp/v0`;
    const { id, ownerToken } = await createMonitor(base, {});
    const key = await makeKey(server.url, 'test', [id]);
    const fired = await call(server.url, 'POST', `/v1/triggers/${id}`, { token: key, body: { vars: { BRANCH: 'main', N: 2 }, ref: 'abc' } });
    expect(fired).toMatchObject({ status: 201, body: { monitor: id, type: 'ai.vigil.trigger', seq: expect.any(Number) } });
    const typed = await call(server.url, 'POST', `/v1/triggers/${id}`, { token: key, body: { type: 'deploy.requested', subject: 'svc', vars: { A: 'b' } } });
    expect(typed.status).toBe(201);
    const sub = await subscribe(base, { monitor: id, subscriber: 'sentinel', from: 1 }, ownerToken);
    const seen = (await replayAll(base, sub)).filter((o) => o.sequence && ['ai.vigil.trigger', 'deploy.requested'].includes(o.type));
    expect(seen.map((o) => [o.type, o.subject, o.data.vars])).toEqual([
      ['ai.vigil.trigger', null, { BRANCH: 'main', N: 2 }],
      ['deploy.requested', 'svc', { A: 'b' }],
    ]);
    expect(seen[0].data.ref).toBe('abc');
  });

  it('refuses a missing key, an unknown monitor and bad vars', async () => {
    const base = `${server.url}/mp/v0`;
    const { id } = await createMonitor(base, {});
    const key = await makeKey(server.url, 'test', [id]);
    expect((await call(server.url, 'POST', `/v1/triggers/${id}`, { body: {} })).status).toBe(401);
    expect((await call(server.url, 'POST', '/v1/triggers/no-such-monitor', { token: key, body: {} })).status).toBe(404);
    const bad = await call(server.url, 'POST', `/v1/triggers/${id}`, { token: key, body: { vars: 'x' } });
    expect(bad.body).toMatchObject({ code: 'INVALID', field: 'vars' });
    const reserved = await call(server.url, 'POST', `/v1/triggers/${id}`, { token: key, body: { provenance: {} } });
    expect(reserved.body).toMatchObject({ code: 'INVALID', field: 'data.provenance' });
    expect((await call(server.url, 'POST', `/v1/triggers/${id}`, { token: key, body: [1] })).body.code).toBe('INVALID');
  });

  it('a key triggers the monitors of its scope only, and one outside it answers exactly as a missing one', async () => {
    const base = `${server.url}/mp/v0`;
    const mine = await createMonitor(base, {});
    const theirs = await createMonitor(base, { visibility: 'private' });
    const key = await makeKey(server.url, 'scoped', [mine.id]);
    const unscoped = await makeKey(server.url, 'unscoped');
    const everything = await makeKey(server.url, 'everything', '*');

    const fired = await call(server.url, 'POST', `/v1/triggers/${mine.id}`, { token: key, body: { vars: { A: '1' } } });
    expect(fired.status).toBe(201);
    const outside = await call(server.url, 'POST', `/v1/triggers/${theirs.id}`, { token: key, body: { vars: { A: '1' } } });
    const missing = await call(server.url, 'POST', '/v1/triggers/no-such-monitor', { token: key, body: { vars: { A: '1' } } });
    expect(outside.status).toBe(missing.status);
    expect(JSON.stringify(outside.body).replaceAll(theirs.id, 'X')).toBe(JSON.stringify(missing.body).replaceAll('no-such-monitor', 'X'));
    expect((await call(server.url, 'POST', `/v1/triggers/${mine.id}`, { token: unscoped, body: {} })).status).toBe(404);
    expect((await call(server.url, 'POST', `/v1/triggers/${theirs.id}`, { token: everything, body: {} })).status).toBe(201);

    const keys = (await call(server.url, 'GET', '/v1/api-keys', { token: adminToken })).body.keys as Array<{ name: string; monitors: unknown }>;
    expect(keys.find((k) => k.name === 'scoped')!.monitors).toEqual([mine.id]);
    expect(keys.find((k) => k.name === 'unscoped')!.monitors).toEqual([]);
    expect(keys.find((k) => k.name === 'everything')!.monitors).toBe('*');
    const mixed = await call(server.url, 'POST', '/v1/api-keys', { token: adminToken, body: { monitors: [mine.id, '*'] } });
    expect(mixed.body).toMatchObject({ code: 'INVALID', field: 'monitors' });
    expect((await call(server.url, 'POST', '/v1/api-keys', { token: adminToken, body: { monitors: 'all' } })).body).toMatchObject({ field: 'monitors' });

    // Nothing was stored on the monitor outside the scope; what was stored names the key, not the owner.
    const sub = await subscribe(base, { monitor: mine.id, subscriber: 'audit', from: 1 }, mine.ownerToken);
    const [trigger] = (await replayAll(base, sub)).filter((o) => o.type === 'ai.vigil.trigger');
    const keyId = keys.find((k) => k.name === 'scoped') as unknown as { id: string };
    expect(trigger.data.provenance).toMatchObject({ actor: `apikey:${keyId.id}`, origin: 'webhook' });
    const theirSub = await subscribe(base, { monitor: theirs.id, subscriber: 'audit', from: 1 }, theirs.ownerToken);
    expect((await replayAll(base, theirSub)).filter((o) => o.type === 'ai.vigil.trigger')).toHaveLength(1);
  });
});
