// The managed edge over real sockets: deploy a worker, call it at /edge/<name>/
// and by Host under --edge-domain, give it a secret it reads, delete it.
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { makeKey, useCloudServer } from './fixtures.ts';

const script = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    return Response.json({ path: url.pathname, query: url.search, method: request.method, secret: env.GREETING ?? null, body: await request.text() });
  },
};`;

/** A GET with a chosen Host header (fetch does not let one set it). */
function getWithHost(port: number, host: string, path: string): Promise<{ status: number; body: any }> {
  return new Promise((done, fail) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', fail);
    req.end();
  });
}

describe.each(transports)('managed edge over %s', { timeout: 120_000 }, (transport) => {
  const server = useCloudServer({ transport, cloud: { edgeDomain: 'edge.test' } });

  it('deploys a worker, serves it by path and Host, reads a secret, deletes it', async () => {
    const key = await makeKey(server.url);
    const deployed = await call(server.url, 'PUT', '/v1/workers/hello', { token: key, body: { script } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    expect(deployed.body).toEqual({ name: 'hello', url: `http://hello.edge.test:${server.server.port}/`, deployed: true });

    const byPath = await fetch(`${server.url}/edge/hello/api/x?y=1`, { method: 'POST', body: 'ping' });
    expect(await byPath.json()).toEqual({ path: '/api/x', query: '?y=1', method: 'POST', secret: null, body: 'ping' });
    const byHost = await getWithHost(server.server.port, `hello.edge.test:${server.server.port}`, '/root');
    expect(byHost).toMatchObject({ status: 200, body: { path: '/root' } });

    expect((await call(server.url, 'PUT', '/v1/workers/hello/secrets/GREETING', { token: key, body: { value: 'hi there' } })).status).toBe(200);
    expect((await call(server.url, 'GET', '/v1/workers/hello/secrets', { token: key })).body).toEqual(['GREETING']);
    expect(await (await fetch(`${server.url}/edge/hello/`)).json()).toMatchObject({ secret: 'hi there' });

    const info = await call(server.url, 'GET', '/v1/workers/hello', { token: key });
    expect(info.body).toEqual({ name: 'hello', id: expect.stringMatching(/^[0-9a-f]{32}$/), created_on: expect.any(String), modified_on: expect.any(String) });
    expect((await call(server.url, 'GET', '/v1/workers', { token: key })).body).toEqual([info.body]);

    expect((await call(server.url, 'DELETE', '/v1/workers/hello/secrets/GREETING', { token: key })).status).toBe(200);
    expect(await (await fetch(`${server.url}/edge/hello/`)).json()).toMatchObject({ secret: null });

    expect((await call(server.url, 'DELETE', '/v1/workers/hello', { token: key })).body).toEqual({ deleted: true });
    const gone = await fetch(`${server.url}/edge/hello/`);
    expect(gone.status).toBe(404);
    expect((await call(server.url, 'GET', '/v1/workers', { token: key })).body).toEqual([]);
  });

  it('runs a scheduled handler on its cron and on request', async () => {
    const key = await makeKey(server.url);
    const cronScript = `let runs = []; export default {
      async scheduled(c) { runs.push(c.cron); },
      async fetch() { return Response.json(runs); },
    };`;
    const bad = await call(server.url, 'PUT', '/v1/workers/ticker', { token: key, body: { script: cronScript, crons: ['not a cron'] } });
    expect(bad.body).toMatchObject({ code: 'INVALID', field: 'crons' });
    expect((await call(server.url, 'PUT', '/v1/workers/ticker', { token: key, body: { script: cronScript, crons: ['* * * * * *'] } })).status).toBe(200);
    const end = Date.now() + 30_000;
    let runs: string[] = [];
    while (runs.length === 0 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 250));
      runs = await (await fetch(`${server.url}/edge/ticker/`)).json();
    }
    expect(runs[0]).toBe('* * * * * *');
    const now = await call(server.url, 'POST', '/v1/workers/ticker/scheduled', { token: key, body: { cron: '0 * * * *' } });
    expect(now.body).toEqual({ outcome: 'ok' });
    expect(await (await fetch(`${server.url}/edge/ticker/`)).json()).toContain('0 * * * *');
    await call(server.url, 'DELETE', '/v1/workers/ticker', { token: key });
  });

  it('refuses bad names, scripts that do not start, and another key\'s worker', async () => {
    const [alice, bob] = [await makeKey(server.url), await makeKey(server.url)];
    expect((await call(server.url, 'PUT', '/v1/workers/Bad_Name', { token: alice, body: { script } })).body).toMatchObject({ code: 'INVALID', field: 'name' });
    const broken = await call(server.url, 'PUT', '/v1/workers/broken', { token: alice, body: { script: 'export default {' } });
    expect(broken.body).toMatchObject({ code: 'INVALID', field: 'script' });
    expect((await call(server.url, 'PUT', '/v1/workers/mine', { token: alice, body: { script } })).status).toBe(200);
    expect((await call(server.url, 'PUT', '/v1/workers/mine', { token: bob, body: { script } })).body.code).toBe('DUPLICATE');
    expect((await call(server.url, 'GET', '/v1/workers/mine', { token: bob })).status).toBe(404);
    expect((await call(server.url, 'PUT', '/v1/workers/mine/secrets/9x', { token: alice, body: { value: 'v' } })).body.field).toBe('key');
    await call(server.url, 'DELETE', '/v1/workers/mine', { token: alice });
  });
});
