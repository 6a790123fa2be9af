// Body limit and browser rules (§13): --max-body, Origin, Host, --allow-origin
// with CORS answers and preflight, --allow-host.
import { describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { rawRequest, useServer } from './fixtures.ts';

const allowed = 'http://good.example:5173';

describe.each(transports)('limits and origins over %s', (transport) => {
  const server = useServer({
    transport,
    args: ['--max-body', '1024', '--allow-origin', allowed, '--allow-host', 'vigil.internal'],
  });
  const monitorCount = async () => (await call(server.base, 'GET', '/monitors')).body.monitors.length as number;

  it('discover reports the configured body limit', async () => {
    expect((await call(server.base, 'GET', '/discover')).body.limits.max_body_bytes).toBe(1024);
  });

  it('a body over --max-body is 413 TOO_LARGE with limit_bytes, and nothing is created', async () => {
    const before = await monitorCount();
    const big = JSON.stringify({ visibility: 'public', description: 'x'.repeat(2000) });
    const declared = await call(server.base, 'POST', '/monitors', { rawBody: big, headers: { 'content-type': 'application/json' } });
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ code: 'TOO_LARGE', limit_bytes: 1024 });
    expect(typeof declared.body.error).toBe('string');

    // Without a Content-Length the server must stop reading once past the limit.
    const chunk = Buffer.from(`{"visibility":"public","description":"${'y'.repeat(600)}`);
    const chunked = await rawRequest(`${server.base}/monitors`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      chunks: [chunk, chunk, chunk],
      body: '"}',
    });
    expect(chunked.status).toBe(413);
    expect(chunked.body).toMatchObject({ code: 'TOO_LARGE', limit_bytes: 1024 });
    expect(await monitorCount()).toBe(before);

    const small = await call(server.base, 'POST', '/monitors', { body: { visibility: 'public', description: 'x'.repeat(900) } });
    expect(small.status).toBe(201);
    expect(await monitorCount()).toBe(before + 1);
  });

  it('an Origin not allowed is 403 ORIGIN_REFUSED without CORS headers, and does nothing', async () => {
    const before = await monitorCount();
    for (const origin of ['http://evil.example', 'http://good.example', 'null']) {
      const reply = await call(server.base, 'POST', '/monitors', { body: { visibility: 'public' }, headers: { origin } });
      expect(reply.status).toBe(403);
      expect(reply.body.code).toBe('ORIGIN_REFUSED');
      expect(reply.headers.get('access-control-allow-origin')).toBeNull();
    }
    const get = await call(server.base, 'GET', '/discover', { headers: { origin: 'http://evil.example' } });
    expect(get.status).toBe(403);
    expect(await monitorCount()).toBe(before);
  });

  it('an allowed Origin gets CORS headers and an OPTIONS preflight 204', async () => {
    const reply = await call(server.base, 'GET', '/discover', { headers: { origin: allowed } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('access-control-allow-origin')).toBe(allowed);
    const created = await call(server.base, 'POST', '/monitors', { body: {}, headers: { origin: allowed } });
    expect(created.status).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe(allowed);
    const refusal = await call(server.base, 'GET', '/monitors/nope', { headers: { origin: allowed } });
    expect(refusal.status).toBe(404);
    expect(refusal.headers.get('access-control-allow-origin')).toBe(allowed);

    const preflight = await call(server.base, 'OPTIONS', '/monitors', {
      headers: { origin: allowed, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toMatch(/authorization/);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toMatch(/content-type/);

    const refusedPreflight = await call(server.base, 'OPTIONS', '/monitors', {
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(refusedPreflight.status).toBe(403);
    expect(refusedPreflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('on loopback the Host must name this machine or an --allow-host name', async () => {
    const port = server.server.port;
    const before = await monitorCount();
    for (const host of ['evil.example', `evil.example:${port}`, 'localhost.evil.example', '127.0.0.2']) {
      const reply = await rawRequest(`${server.base}/monitors`, {
        method: 'POST',
        headers: { host, 'content-type': 'application/json' },
        body: '{"visibility":"public"}',
      });
      expect({ host, status: reply.status, code: reply.body?.code }).toEqual({ host, status: 403, code: 'ORIGIN_REFUSED' });
    }
    expect(await monitorCount()).toBe(before);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST', `vigil.internal:${port}`]) {
      const reply = await rawRequest(`${server.base}/discover`, { headers: { host } });
      expect({ host, status: reply.status }).toEqual({ host, status: 200 });
    }
  });
});
