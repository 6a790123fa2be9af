// The inspector's trust boundary (`vigil serve --inspect`): it listens on
// loopback even when the server listens everywhere, refuses a browser's
// WebSocket from another origin, needs the admin token when --inspect-host
// puts it beyond loopback, and shows no URL's credentials — nor do the
// dashboard's stream, served monitors, observations and the admin snapshot.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type RunningServer, startServer } from '../../src/server.ts';
import { call } from '../support/client.ts';

const admin = 'vga_inspect_guard_token_0123456789';
const secrets = ['pa55word', 'KEY-0451', 'tok-7788'];

/** Opens a WebSocket; resolves with the first message, or the HTTP status that refused it. */
function open(url: string, headers: Record<string, string> = {}): Promise<{ status: number; socket?: WebSocket }> {
  return new Promise((done, fail) => {
    const socket = new WebSocket(url, { headers });
    socket.once('open', () => done({ status: 101, socket }));
    socket.once('unexpected-response', (_req, res) => {
      res.resume();
      done({ status: res.statusCode ?? 0 });
    });
    socket.once('error', fail);
  });
}

/** Collects what the relay sends until `until` holds of the joined text. */
function collect(socket: WebSocket, until: (text: string) => boolean): Promise<string> {
  return new Promise((done, fail) => {
    let text = '';
    const timer = setTimeout(() => fail(new Error(`the inspector never sent what was awaited; got ${text.length} characters`)), 30_000);
    socket.on('message', (data) => {
      text += `${data.toString()}\n`;
      if (until(text)) {
        clearTimeout(timer);
        done(text);
      }
    });
  });
}

const outsideAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && !a.internal && a.family === 'IPv4')?.address;

describe('the inspector beside a server on 0.0.0.0', { timeout: 60_000 }, () => {
  let server: RunningServer;
  let target: Server;

  beforeAll(async () => {
    target = createServer((_req, res) => {
      res.writeHead(404);
      res.end('gone');
    });
    await new Promise<void>((d) => target.listen(0, '127.0.0.1', d));
    server = await startServer({
      host: '0.0.0.0',
      port: 0,
      inspectPort: 0,
      allowAdmin: admin,
      cloud: false,
      sources: { kinds: ['http', 'feed'], allowPrivate: true, minBackoffMs: 200 },
      log: () => undefined,
    });
  });
  afterAll(async () => {
    await server?.close();
    target?.closeAllConnections();
    await new Promise((d) => target?.close(d));
  });

  it('listens on loopback only', async () => {
    expect(server.inspectUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const port = Number(new URL(server.inspectUrl!).port);
    if (outsideAddress) {
      const reached = await new Promise<string>((done) => {
        const socket = connect(port, outsideAddress);
        socket.once('connect', () => {
          socket.destroy();
          done('connected');
        });
        socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
      });
      expect(reached).toBe('ECONNREFUSED');
    }
  });

  it('refuses a WebSocket from another origin or a rebinding Host, and admits its own page and tools', async () => {
    const url = server.inspectUrl!;
    const port = new URL(url).port;
    expect((await open(url, { origin: 'http://evil.test' })).status).toBe(403);
    expect((await open(url, { origin: 'http://evil.test', host: `evil.test:${port}` })).status).toBe(403);
    const own = await open(url, { origin: `http://127.0.0.1:${port}` });
    expect(own.status).toBe(101);
    own.socket!.close();
    const tool = await open(url);
    expect(tool.status).toBe(101);
    tool.socket!.close();
  });

  it('shows no credentials of a source URL: inspector, monitor, observations, dashboard, snapshot', async () => {
    const relay = await open(server.inspectUrl!);
    const port = (target.address() as AddressInfo).port;
    const base = `${server.url}/mp/v0`;
    const watched = `http://ops:${secrets[0]}@127.0.0.1:${port}/health?api_key=${secrets[1]}&region=eu`;
    const seen = collect(relay.socket!, (text) => text.includes('source:guarded-feed') && text.includes('answered 404'));
    const http = await call(base, 'POST', '/monitors', { body: { id: 'guarded-http', visibility: 'public', source: { kind: 'http', url: watched, interval_s: 1 } } });
    expect(http.status).toBe(201);
    const feed = await call(base, 'POST', '/monitors', {
      body: { id: 'guarded-feed', source: { kind: 'feed', url: `http://127.0.0.1:${port}/feed?token=${secrets[2]}`, interval_s: 1 } },
    });
    expect(feed.status).toBe(201);
    const inspected = await seen;
    expect(inspected).toContain('region=eu');

    // A reader of the public monitor, its observations, the dashboard's stream and the admin snapshot.
    const monitor = await call(base, 'GET', '/monitors/guarded-http');
    expect(monitor.body.source.url).toBe(`http://***@127.0.0.1:${port}/health?api_key=***&region=eu`);
    const sub = await call(base, 'POST', '/subscriptions', { token: http.body.owner_token, body: { monitor: 'guarded-http', subscriber: 'agent:reader', from: 'earliest' } });
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    let observations: unknown;
    for (let i = 0; i < 200 && !JSON.stringify(observations ?? '').includes('reachable'); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      observations = (await call(base, 'GET', `/subscriptions/${sub.body.subscription.id}/pull?limit=100&cursor=1`, { token: sub.body.token })).body;
    }
    expect(JSON.stringify(observations)).toContain('api_key=***');
    // A new URL given by update: the recorded change (an observation subscribers read) shows it redacted too.
    const updated = await call(base, 'POST', '/monitors/guarded-http/update', {
      token: http.body.owner_token,
      body: { reason: 'moved region', patch: { source: { kind: 'http', url: watched.replace('region=eu', 'region=us'), interval_s: 1 } } },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const configured = (await call(base, 'GET', `/subscriptions/${sub.body.subscription.id}/pull?limit=100&cursor=1`, { token: sub.body.token })).body;
    expect(JSON.stringify(configured)).toContain('region=us');
    const dashboard = await fetch(`${server.url}/ui/events`, { headers: { authorization: `Bearer ${admin}` } });
    const reader = dashboard.body!.getReader();
    let view = '';
    while (!view.includes('answered 404')) view += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(view).toContain('token=***');
    const snapshot = await call(base, 'GET', '/admin/snapshot', { token: admin });

    for (const shown of [inspected, JSON.stringify(monitor.body), JSON.stringify(observations), JSON.stringify(configured), JSON.stringify(updated.body), view, JSON.stringify(snapshot.body)]) {
      for (const secret of secrets) expect(shown).not.toContain(secret);
    }
    relay.socket!.close();
  });
});

describe('the inspector beyond loopback (--inspect-host)', { timeout: 60_000 }, () => {
  it('does not start without a token to guard it', async () => {
    await expect(startServer({ port: 0, inspectPort: 0, inspectHost: '0.0.0.0', cloud: false })).rejects.toThrow(
      /--inspect-host 0\.0\.0\.0 listens beyond loopback, where the inspector needs a token: start with --allow-admin/,
    );
  });

  it('admits only a client with the admin token', async () => {
    const server = await startServer({ port: 0, inspectPort: 0, inspectHost: '0.0.0.0', allowAdmin: admin, cloud: false, log: () => undefined });
    try {
      const url = server.inspectUrl!;
      expect((await open(url)).status).toBe(401);
      expect((await open(`${url}/?token=wrong`)).status).toBe(401);
      const byQuery = await open(`${url}/?token=${admin}`);
      expect(byQuery.status).toBe(101);
      byQuery.socket!.close();
      const byHeader = await open(url, { authorization: `Bearer ${admin}` });
      expect(byHeader.status).toBe(101);
      byHeader.socket!.close();
      if (outsideAddress) expect((await open(url.replace('127.0.0.1', outsideAddress))).status).toBe(401);
    } finally {
      await server.close();
    }
  });
});
