// Network sources and private addresses: anyone who may create a monitor
// chooses its source's URL, so a server that listens beyond loopback must not
// poll its own machine, its network or the cloud's metadata address for them.
// Real `vigil serve` processes, a real HTTP and WebSocket counterpart.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { openSse } from '../support/sse.ts';
import { type ServerProcess, stablePort, startServerProcess, tempDir } from '../support/server-process.ts';
import { call, eventually, watchedMonitor, writtenAtLeast } from './helpers.ts';

const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

async function serve(args: string[], state?: string, port?: number): Promise<ServerProcess> {
  const server = await startServerProcess({ transport: 'node', args: ['--sources', 'http,ws,feed', ...args], state, port });
  servers.push(server);
  return server;
}

const createWith = (base: string, source: Record<string, unknown>) => call(base, 'POST', '/monitors', { body: { source } });

describe('a server listening beyond loopback', () => {
  it('refuses http, feed and ws sources aimed at private, loopback or link-local addresses, naming the field and the flag', async () => {
    const server = await serve(['--host', '0.0.0.0']);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.output()).toContain('vigil: listening on 0.0.0.0: clients on other machines can connect; http, feed and ws sources reach public addresses only');
    const inward = [
      { kind: 'http', url: 'http://127.0.0.1:9/health' },
      { kind: 'http', url: 'http://localhost:8080/' },
      { kind: 'http', url: 'http://[::1]:8080/' },
      { kind: 'http', url: 'http://169.254.169.254/latest/meta-data/' },
      { kind: 'http', url: 'http://10.1.2.3/' },
      { kind: 'http', url: 'http://2130706433/' },
      { kind: 'feed', url: 'http://192.168.1.1/feed.xml' },
      { kind: 'ws', url: 'ws://app.localhost/stream' },
    ];
    for (const source of inward) {
      const reply = await createWith(server.base, source);
      expect(reply.status, JSON.stringify(source)).toBe(400);
      expect(reply.body.code).toBe('INVALID');
      expect(reply.body.field).toBe('source.url');
      expect(reply.body.error).toMatch(/private, loopback or link-local address/);
      expect(reply.body.error).toContain('--allow-private-sources');
    }
    // A public address is accepted (TEST-NET-3: nothing answers there, which the source reports in time).
    expect((await createWith(server.base, { kind: 'http', url: 'http://203.0.113.7/', interval_s: 3600 })).status).toBe(201);
  });

  it('accepts them when started with --allow-private-sources', async () => {
    const server = await serve(['--host', '0.0.0.0', '--allow-private-sources']);
    expect((await createWith(server.base, { kind: 'http', url: 'http://127.0.0.1:9/health', interval_s: 3600 })).status).toBe(201);
  });

  it('refuses at connect time a stored source whose name or address is inward, and the counterpart sees no request', async () => {
    let requests = 0;
    const counterpart = createServer((_req, res) => {
      requests++;
      res.end('ok');
    });
    await new Promise<void>((done) => counterpart.listen(0, '127.0.0.1', done));
    const port = (counterpart.address() as AddressInfo).port;
    const sockets = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((done) => sockets.once('listening', done));
    let wsConnections = 0;
    sockets.on('connection', () => wsConnections++);
    const wsPort = (sockets.address() as AddressInfo).port;

    // Created on a loopback-only server, where every client is local and such sources are allowed.
    const state = join(tempDir('vigil-private-'), 'state.db');
    let server = await serve([], state, await stablePort());
    const byName = await watchedMonitor(server.base, { kind: 'http', url: `http://localhost:${port}/`, interval_s: 1 });
    const byAddress = await watchedMonitor(server.base, { kind: 'http', url: `http://127.0.0.1:${port}/`, interval_s: 1 });
    const socket = await watchedMonitor(server.base, { kind: 'ws', url: `ws://localhost:${wsPort}/` });
    expect((await writtenAtLeast(byName, 1))[0].data).toMatchObject({ reachable: true, status: 200 });
    expect((await writtenAtLeast(byAddress, 1))[0].data).toMatchObject({ reachable: true, status: 200 });
    await eventually(async () => (wsConnections > 0 ? true : undefined), 'the ws source connected');
    await server.stop();

    // The same state on a server that listens on every interface, without the flag.
    server = await serve(['--host', '0.0.0.0'], state, server.port);
    const seenBefore = requests;
    const wsBefore = wsConnections;
    for (const watched of [byName, byAddress]) {
      const [, refused] = await writtenAtLeast(watched, 2, 'the refusal after the restart');
      expect(refused.data).toMatchObject({ reachable: false, status: null, previous: { reachable: true } });
      expect(refused.data.error).toMatch(/private, loopback or link-local address/);
      expect(refused.data.error).toContain('--allow-private-sources');
    }
    const dashboard = await openSse(`${server.url}/ui/events`, { authorization: `Bearer ${socket.ownerToken}` });
    try {
      const [view] = await dashboard.waitFor(1, 'view');
      const row = JSON.parse(view!.data).monitors.find((m: { id: string }) => m.id === socket.id);
      expect(row.source_error).toMatch(/resolves only to private, loopback or link-local addresses; start vigil serve with --allow-private-sources/);
    } finally {
      dashboard.close();
    }
    await new Promise((d) => setTimeout(d, 1500));
    expect(requests).toBe(seenBefore);
    expect(wsConnections).toBe(wsBefore);

    counterpart.close();
    for (const client of sockets.clients) client.terminate();
    await new Promise((done) => sockets.close(done));
  });
});
