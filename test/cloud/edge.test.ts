// The managed edge over real sockets: deploy a worker, call it by Host on the
// edge's own port (never on the API's origin), give it a secret it reads,
// delete it.
import { execFileSync } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { edgeFetch } from '../support/edge.ts';
import { transports } from '../support/server-process.ts';
import { makeKey, useCloudServer } from './fixtures.ts';

const script = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/sw') return new Response('self.onfetch = () => {}', { headers: { 'content-type': 'text/javascript', 'service-worker-allowed': '/', 'x-kept': 'yes' } });
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
  const at = (name: string, path = '') => `http://${name}.edge.test:${server.server.edgePort}/${path}`;

  it('deploys a worker, serves it by Host on the edge port, reads a secret, deletes it', async () => {
    const key = await makeKey(server.url);
    const deployed = await call(server.url, 'PUT', '/v1/workers/hello', { token: key, body: { script } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    expect(server.server.edgePort).not.toBe(server.server.port);
    expect(deployed.body).toEqual({ name: 'hello', url: at('hello'), deployed: true });

    const posted = await edgeFetch(at('hello', 'api/x?y=1'), { method: 'POST', body: 'ping' });
    expect(posted.json()).toEqual({ path: '/api/x', query: '?y=1', method: 'POST', secret: null, body: 'ping' });
    expect((await edgeFetch(at('hello', 'root'))).json()).toMatchObject({ path: '/root' });

    expect((await call(server.url, 'PUT', '/v1/workers/hello/secrets/GREETING', { token: key, body: { value: 'hi there' } })).status).toBe(200);
    expect((await call(server.url, 'GET', '/v1/workers/hello/secrets', { token: key })).body).toEqual(['GREETING']);
    expect((await edgeFetch(at('hello'))).json()).toMatchObject({ secret: 'hi there' });

    const info = await call(server.url, 'GET', '/v1/workers/hello', { token: key });
    expect(info.body).toEqual({ name: 'hello', id: expect.stringMatching(/^[0-9a-f]{32}$/), created_on: expect.any(String), modified_on: expect.any(String) });
    expect((await call(server.url, 'GET', '/v1/workers', { token: key })).body).toEqual([info.body]);

    expect((await call(server.url, 'DELETE', '/v1/workers/hello/secrets/GREETING', { token: key })).status).toBe(200);
    expect((await edgeFetch(at('hello'))).json()).toMatchObject({ secret: null });

    expect((await call(server.url, 'DELETE', '/v1/workers/hello', { token: key })).body).toEqual({ deleted: true });
    const gone = await edgeFetch(at('hello'));
    expect(gone.status).toBe(404);
    expect((await call(server.url, 'GET', '/v1/workers', { token: key })).body).toEqual([]);
  });

  it('never answers for a worker on the API and dashboard origin, and strips Service-Worker-Allowed', async () => {
    const key = await makeKey(server.url);
    expect((await call(server.url, 'PUT', '/v1/workers/apart', { token: key, body: { script } })).status).toBe(200);
    // The old path on the main port says where the worker went and runs none of its code.
    const byPath = await fetch(`${server.url}/edge/apart/sw`);
    expect(byPath.status).toBe(404);
    expect(await byPath.json()).toEqual({ code: 'NOT_FOUND', error: `Workers do not answer on the API's origin; worker "apart" is at ${at('apart')}.` });
    // Nor by Host on the main port.
    const byHost = await getWithHost(server.server.port, `apart.edge.test:${server.server.port}`, '/sw');
    expect(byHost.status).toBe(403);
    expect(byHost.body.code).toBe('ORIGIN_REFUSED');
    // The edge port answers for workers only, by their host names.
    const bare = await edgeFetch(`http://127.0.0.1:${server.server.edgePort}/ui`);
    expect(bare.status).toBe(404);
    expect(bare.json().error).toMatch(/^This is the managed edge: each worker answers at its own host name/);
    // A worker cannot widen a service worker's scope past its own origin; its other headers pass.
    const sw = await edgeFetch(at('apart', 'sw'));
    expect(sw.status).toBe(200);
    expect(sw.headers['x-kept']).toBe('yes');
    expect(sw.headers['service-worker-allowed']).toBeUndefined();
    await call(server.url, 'DELETE', '/v1/workers/apart', { token: key });
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
      runs = (await edgeFetch(at('ticker'))).json();
    }
    expect(runs[0]).toBe('* * * * * *');
    const now = await call(server.url, 'POST', '/v1/workers/ticker/scheduled', { token: key, body: { cron: '0 * * * *' } });
    expect(now.body).toEqual({ outcome: 'ok' });
    expect((await edgeFetch(at('ticker'))).json()).toContain('0 * * * *');
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

describe('managed edge limits', { timeout: 120_000 }, () => {
  const server = useCloudServer({ cloud: { workerTimeoutMs: 1500 } });
  const limitsScript = `export default {
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === '/spin') { while (true) {} }
      if (path === '/endless') return new Response(new ReadableStream({ pull(c) { c.enqueue(new Uint8Array(1 << 20)); } }));
      if (path === '/declared') return new Response('x'.repeat((32 << 20) + 1));
      return Response.json({ ok: true });
    },
    async scheduled(c) { if (c.cron === '0 0 * * *') { while (true) {} } },
  };`;
  /** The workerd processes this test's server started (it runs in this process). */
  const workerdPids = () =>
    execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim().endsWith('workerd'))
      .map((line) => Number(line.trim().split(/\s+/)[0]));

  it('stops a worker that spins past the time limit (504), frees its process, and serves the next request afresh', async () => {
    const key = await makeKey(server.url);
    const before = new Set(workerdPids());
    expect((await call(server.url, 'PUT', '/v1/workers/spinner', { token: key, body: { script: limitsScript } })).status).toBe(200);
    expect((await edgeFetch(`http://spinner.localhost:${server.server.edgePort}/`)).json()).toEqual({ ok: true });
    const spinner = workerdPids().filter((pid) => !before.has(pid));

    const spun = await edgeFetch(`http://spinner.localhost:${server.server.edgePort}/spin`);
    expect(spun.status).toBe(504);
    expect(spun.json()).toEqual({
      code: 'UNAVAILABLE',
      error: 'Worker "spinner" did not finish its request within 1.5 s; it was stopped and starts afresh on its next use.',
    });
    // The spinning workerd is gone, not left holding a core.
    expect(spinner.length).toBeGreaterThan(0);
    for (let i = 0; i < 50 && workerdPids().some((pid) => spinner.includes(pid)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(workerdPids().filter((pid) => spinner.includes(pid))).toEqual([]);
    expect((await edgeFetch(`http://spinner.localhost:${server.server.edgePort}/`)).json()).toEqual({ ok: true });

    // Miniflare's own trigger route is not reachable through the edge (it would run the handler for anyone).
    const trigger = await edgeFetch(`http://spinner.localhost:${server.server.edgePort}/cdn-cgi/mf/scheduled?cron=${encodeURIComponent('0 0 * * *')}`);
    expect(trigger.status).toBe(404);
    expect(trigger.json().error).toBe('Paths under /cdn-cgi/ belong to the edge itself; worker "spinner" cannot be reached there.');

    const scheduled = await call(server.url, 'POST', '/v1/workers/spinner/scheduled', { token: key, body: { cron: '0 0 * * *' } });
    expect(scheduled.body).toEqual({
      code: 'UNAVAILABLE',
      error: 'Worker "spinner" did not finish its scheduled run within 1.5 s; it was stopped and starts afresh on its next use.',
    });
    expect((await edgeFetch(`http://spinner.localhost:${server.server.edgePort}/`)).json()).toEqual({ ok: true });
    await call(server.url, 'DELETE', '/v1/workers/spinner', { token: key });
  });

  // A server of its own whose start limit is 2 s, not 10: the script spins a core until the limit, and the
  // limit's length is not what is tested (a script that does start is never deployed here, so no busy machine
  // can make this one late).
  const starting = useCloudServer({ cloud: { workerTimeoutMs: 1500, workerStartMs: 2000 } });
  it('refuses to deploy a script whose top-level code never finishes, leaving no workerd behind', async () => {
    const key = await makeKey(starting.url);
    const before = new Set(workerdPids());
    const spun = await call(starting.url, 'PUT', '/v1/workers/stuck', { token: key, body: { script: `while (true) {}\nexport default { async fetch() { return new Response('never'); } };` } });
    expect(spun.status).toBe(400);
    expect(spun.body).toEqual({
      code: 'INVALID',
      field: 'script',
      error: 'The worker does not start: the script did not start within 2 s (its top-level code must finish)',
    });
    for (let i = 0; i < 50 && workerdPids().some((pid) => !before.has(pid)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(workerdPids().filter((pid) => !before.has(pid))).toEqual([]);
    expect((await call(starting.url, 'GET', '/v1/workers/stuck', { token: key })).status).toBe(404);
  });

  // Its own server with the default limits: 30 s is ample time to reach 32 MB.
  const roomy = useCloudServer();
  it('cuts an answer at 32 MB, refuses one declared larger with a 502, and the worker answers on', async () => {
    const key = await makeKey(roomy.url);
    expect((await call(roomy.url, 'PUT', '/v1/workers/firehose', { token: key, body: { script: limitsScript } })).status).toBe(200);
    // Relayed as it comes: the head went out first, and the connection is cut where the limit is reached.
    const endless = await new Promise<{ status: number; bytes: number; complete: boolean }>((done, fail) => {
      const req = httpRequest({ host: '127.0.0.1', port: roomy.server.edgePort, path: '/endless', headers: { host: `firehose.localhost:${roomy.server.edgePort}` } }, (res) => {
        let bytes = 0;
        const end = () => done({ status: res.statusCode ?? 0, bytes, complete: res.complete });
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('error', () => {});
        res.on('close', end);
      });
      req.on('error', (error) => ((req as { res?: unknown }).res ? undefined : fail(error)));
      req.end();
    });
    expect(endless.status).toBe(200);
    expect(endless.complete).toBe(false);
    expect(endless.bytes).toBeLessThanOrEqual(32 << 20);
    const declared = await edgeFetch(`http://firehose.localhost:${roomy.server.edgePort}/declared`);
    expect(declared.status).toBe(502);
    expect(declared.json()).toEqual({ code: 'UNAVAILABLE', error: `Worker "firehose" answered ${(32 << 20) + 1} bytes, more than the edge relays (${32 << 20}); the answer was dropped.` });
    expect((await edgeFetch(`http://firehose.localhost:${roomy.server.edgePort}/`)).json()).toEqual({ ok: true });
    await call(roomy.url, 'DELETE', '/v1/workers/firehose', { token: key });
  });
});

describe('managed edge bounds: memory and outbound fetches', { timeout: 120_000 }, () => {
  const server = useCloudServer({ cloud: { workerMemoryBytes: 128 << 20 } });
  const open = useCloudServer({ cloud: { allowPrivateWorkers: true } });
  const boundsScript = `const kept = [];
  export default {
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname === '/grow') {
        while (kept.length < 1024) {
          for (let i = 0; i < 16; i++) kept.push(new Uint8Array(1 << 20).fill(7));
          await new Promise((r) => setTimeout(r, 20));
        }
        return new Response('grew to ' + kept.length + ' MB');
      }
      if (url.pathname === '/fetch') {
        try {
          const answer = await fetch(url.searchParams.get('to'));
          return Response.json({ status: answer.status, refused: answer.headers.get('x-vigil-edge-refused'), text: await answer.text() });
        } catch (e) {
          return Response.json({ error: String(e) });
        }
      }
      return Response.json({ ok: true, held_mb: kept.length });
    },
  };`;
  const workerd = () =>
    execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim().endsWith('workerd'))
      .map((line) => Number(line.trim().split(/\s+/)[0]));

  it('stops a worker past its memory limit with a 502, and serves the next request afresh', async () => {
    const key = await makeKey(server.url);
    const before = new Set(workerd());
    expect((await call(server.url, 'PUT', '/v1/workers/hog', { token: key, body: { script: boundsScript } })).status).toBe(200);
    const at = (path: string) => `http://hog.localhost:${server.server.edgePort}${path}`;
    expect((await edgeFetch(at('/'))).json()).toEqual({ ok: true, held_mb: 0 });
    const hog = workerd().filter((pid) => !before.has(pid));
    const grown = await edgeFetch(at('/grow'));
    expect(grown.status, grown.text).toBe(502);
    expect(grown.json()).toEqual({
      code: 'UNAVAILABLE',
      error: expect.stringMatching(/^Worker "hog" went past its memory limit of 128 MB \(\d+ MB\); it was stopped and starts afresh on its next use\.$/),
    });
    for (let i = 0; i < 50 && workerd().some((pid) => hog.includes(pid)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(workerd().filter((pid) => hog.includes(pid))).toEqual([]);
    expect((await edgeFetch(at('/'))).json()).toEqual({ ok: true, held_mb: 0 });
    await call(server.url, 'DELETE', '/v1/workers/hog', { token: key });
  });

  it("refuses a worker's fetch of loopback (the server itself, a local service, a name resolving there) unless allowed", async () => {
    const hits: string[] = [];
    const local = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('local secret');
    });
    await new Promise<void>((d) => local.listen(0, '127.0.0.1', d));
    const port = (local.address() as AddressInfo).port;
    try {
      const key = await makeKey(server.url);
      expect((await call(server.url, 'PUT', '/v1/workers/prober', { token: key, body: { script: boundsScript } })).status).toBe(200);
      const probe = async (edge: { server: { edgePort?: number } }, to: string) =>
        (await edgeFetch(`http://prober.localhost:${edge.server.edgePort}/fetch?to=${encodeURIComponent(to)}`)).json();
      for (const to of [`http://127.0.0.1:${port}/a`, `http://localhost:${port}/b`, `${server.url}/v1/workers`, `http://[::1]:${server.server.edgePort}/`]) {
        const seen = await probe(server, to);
        expect(seen, to).toMatchObject({ status: 502, refused: '1' });
        expect(seen.text, to).toMatch(/private, loopback or link-local address.*--allow-private-workers/);
      }
      expect(hits).toEqual([]);

      // --allow-private-workers: the same fetch goes through.
      const openKey = await makeKey(open.url);
      expect((await call(open.url, 'PUT', '/v1/workers/prober', { token: openKey, body: { script: boundsScript } })).status).toBe(200);
      expect(await probe(open, `http://127.0.0.1:${port}/c`)).toEqual({ status: 200, refused: null, text: 'local secret' });
      expect(hits).toEqual(['/c']);
    } finally {
      local.closeAllConnections();
      await new Promise((d) => local.close(d));
    }
  });
});
