// Inbound triggers: POST /v1/triggers/<monitor> publishes the body as an
// observation that a sentinel on the monitor reads, vars included.
import { describe, expect, it } from 'vitest';
import { call, createMonitor, replayAll, subscribe } from '../support/client.ts';
import { makeKey, useCloudServer } from './fixtures.ts';

describe('inbound triggers', () => {
  const server = useCloudServer();

  it('publishes the body as an observation, type ai.vigil.trigger unless the body names one', async () => {
    const base = `${server.url}/mp/v0`;
    const key = await makeKey(server.url);
    const { id, ownerToken } = await createMonitor(base, {});
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
    const key = await makeKey(server.url);
    const { id } = await createMonitor(base, {});
    expect((await call(server.url, 'POST', `/v1/triggers/${id}`, { body: {} })).status).toBe(401);
    expect((await call(server.url, 'POST', '/v1/triggers/no-such-monitor', { token: key, body: {} })).status).toBe(404);
    const bad = await call(server.url, 'POST', `/v1/triggers/${id}`, { token: key, body: { vars: 'x' } });
    expect(bad.body).toMatchObject({ code: 'INVALID', field: 'vars' });
    const reserved = await call(server.url, 'POST', `/v1/triggers/${id}`, { token: key, body: { provenance: {} } });
    expect(reserved.body).toMatchObject({ code: 'INVALID', field: 'data.provenance' });
    expect((await call(server.url, 'POST', `/v1/triggers/${id}`, { token: key, body: [1] })).body.code).toBe('INVALID');
  });
});
