// http and ws sources against real counterparts started here: a plain HTTP
// server that changes its answer, goes away and comes back, and a WebSocket
// server that sends messages and drops the connection.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { eventually, type SourceServer, sourceServer, watchedMonitor, writtenAtLeast } from './helpers.ts';

let vigil: SourceServer;
beforeAll(async () => {
  vigil = await sourceServer({ kinds: ['http', 'ws'] });
});
afterAll(() => vigil.close());

function listen(server: Server, port = 0): Promise<number> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => done((server.address() as AddressInfo).port));
  });
}

describe('http source', () => {
  it('writes on status and body changes and on reachability, backs off while down, and comes back', async () => {
    let body = 'one';
    let status = 200;
    const handler = (_req: unknown, res: import('node:http').ServerResponse) => {
      res.writeHead(status);
      res.end(body);
    };
    let target = createServer(handler);
    const port = await listen(target);
    const watched = await watchedMonitor(vigil.base, { kind: 'http', url: `http://127.0.0.1:${port}/health`, interval_s: 1 });

    const [first] = await writtenAtLeast(watched, 1);
    expect(first.type).toBe('ai.vigil.source.http');
    expect(first).toMatchObject({ origin: 'system', actor: 'source:http' });
    expect(first.data).toMatchObject({ reachable: true, status: 200 });
    expect(typeof first.data.latency_ms).toBe('number');

    body = 'two';
    const second = (await writtenAtLeast(watched, 2))[1];
    expect(second.data.body_sha256).not.toBe(first.data.body_sha256);
    status = 503;
    expect((await writtenAtLeast(watched, 3))[2].data).toMatchObject({ status: 503, previous: { status: 200 } });

    target.closeAllConnections();
    await new Promise((d) => target.close(d));
    const down = (await writtenAtLeast(watched, 4))[3];
    expect(down.data).toMatchObject({ reachable: false, status: null });
    await eventually(async () => (vigil.server.service.system.sources.get(watched.id)?.getSnapshot().value === 'backing_off' ? true : undefined), 'backing off');
    // Still down: nothing more is written while it retries.
    const countDown = (await watched.written()).length;

    status = 200;
    target = createServer(handler);
    await listen(target, port);
    const back = (await writtenAtLeast(watched, countDown + 1)).at(-1);
    expect(back.data).toMatchObject({ reachable: true, status: 200, previous: { reachable: false } });
    const state = await watched.state();
    expect(state.ages.since_last_source_contact_s).not.toBeNull();
    target.closeAllConnections();
    await new Promise((d) => target.close(d));
  });

  it('hashes the first 8 MB of an endless body and stops reading it', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'vigil ');
    let closed = false;
    const endless = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.on('close', () => (closed = true));
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const port = await listen(endless);
    const watched = await watchedMonitor(vigil.base, { kind: 'http', url: `http://127.0.0.1:${port}/stream`, interval_s: 5 });
    const [first] = await writtenAtLeast(watched, 1);
    const expected = createHash('sha256');
    for (let i = 0; i < 128; i++) expected.update(chunk);
    expect(first.data).toMatchObject({ reachable: true, status: 200, body_sha256: expected.digest('hex') });
    await eventually(async () => (closed ? true : undefined), 'the endless response closed by the source');
    endless.closeAllConnections();
    await new Promise((d) => endless.close(d));
  });

  it('raises stale_source when the source fails for longer than ttl_seconds', async () => {
    const watched = await watchedMonitor(vigil.base, { kind: 'http', url: 'http://127.0.0.1:1/', interval_s: 1 });
    await vigil.server.service.settle();
    const reply = await fetch(`${vigil.base}/monitors/${watched.id}/update`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${watched.ownerToken}` },
      body: JSON.stringify({ reason: 'test', patch: { ttl_seconds: 1 } }),
    });
    expect(reply.status).toBe(200);
    const state = await eventually(async () => {
      const s = await watched.state();
      return s.confidence.gaps.includes('stale_source') ? s : undefined;
    }, 'stale_source');
    expect(state.ages.since_last_source_contact_s).toBeNull();
    const [unreachable] = await watched.written();
    expect(unreachable.data.reachable).toBe(false);
  });
});

describe('ws source', () => {
  it('writes each message and reconnects after the connection drops', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((d) => wss.once('listening', d));
    let connections = 0;
    wss.on('connection', (socket) => {
      connections++;
      socket.send(JSON.stringify({ hello: connections }));
      socket.send('plain text');
      if (connections === 1) setTimeout(() => socket.terminate(), 100);
    });
    const port = (wss.address() as AddressInfo).port;
    const watched = await watchedMonitor(vigil.base, { kind: 'ws', url: `ws://127.0.0.1:${port}/feed` });
    const written = await writtenAtLeast(watched, 4, 'messages from two connections');
    expect(written.map((o) => o.data.message)).toEqual([{ hello: 1 }, 'plain text', { hello: 2 }, 'plain text']);
    expect(written[0].actor).toBe('source:ws');
    expect(connections).toBeGreaterThanOrEqual(2);
    for (const client of wss.clients) client.terminate();
    await new Promise((d) => wss.close(d));
  });
});
