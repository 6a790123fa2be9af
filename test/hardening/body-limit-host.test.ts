// --max-body refuses before reading the body whole (Content-Length and
// chunked), and the Host rule on loopback defeats DNS rebinding (§13). Raw
// sockets: the 413 must arrive while the client still holds the rest back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { type ServerProcess, startServerProcess, transports } from '../support/server-process.ts';
import { rawExchange, sleep } from './support.ts';

const limit = 1024;

describe.each(transports)('body limit and Host over %s', (transport) => {
  let server: ServerProcess;
  let rebindable: ServerProcess;
  let admin: string;
  beforeAll(async () => {
    [server, rebindable] = await Promise.all([
      startServerProcess({ transport, args: ['--max-body', String(limit), '--allow-admin=adm-limit'] }),
      startServerProcess({ transport, args: ['--allow-host', 'evil.example', '--allow-admin=adm-limit'] }),
    ]);
    admin = 'adm-limit';
  });
  afterAll(() => Promise.all([server?.stop(), rebindable?.stop()]));

  const monitorCount = async (s: ServerProcess) =>
    (await call(s.base, 'GET', '/admin/snapshot', { token: admin })).body.monitors as number;
  const post = (host = '127.0.0.1', extra = '') =>
    `POST /mp/v0/monitors HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json${extra}`;

  it('a declared Content-Length over the limit is 413 TOO_LARGE {limit_bytes} before any body byte is sent', async () => {
    const before = await monitorCount(server);
    const reply = await rawExchange(server.port, post('127.0.0.1', '\r\nContent-Length: 104857600'));
    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({ code: 'TOO_LARGE', limit_bytes: limit });
    expect(typeof reply.body.error).toBe('string');
    expect(await monitorCount(server)).toBe(before);
  });

  it('a chunked body is refused as soon as it passes the limit, while the rest is still unsent', async () => {
    const before = await monitorCount(server);
    // One chunk already past the limit; the terminating chunk never comes.
    const first = `{"id":"huge","description":"${'x'.repeat(limit * 2)}`;
    const reply = await rawExchange(server.port, post('127.0.0.1', '\r\nTransfer-Encoding: chunked'), [
      `${Buffer.byteLength(first).toString(16)}\r\n${first}\r\n`,
    ]);
    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({ code: 'TOO_LARGE', limit_bytes: limit });
    expect(await monitorCount(server)).toBe(before);
  });

  it('chunks that pass the limit only together are refused at the chunk that passes it', async () => {
    const before = await monitorCount(server);
    const piece = 'y'.repeat(600);
    const chunk = `${piece.length.toString(16)}\r\n${piece}\r\n`;
    // Under the limit the server keeps reading; one more chunk passes it. Neither stream is ever finished.
    const pending = rawExchange(server.port, post('127.0.0.1', '\r\nTransfer-Encoding: chunked'), [chunk], 1000);
    const early = await Promise.race([pending.then(() => 'answered'), sleep(200).then(() => 'waiting')]);
    expect(early).toBe('waiting');
    const reply = await rawExchange(server.port, post('127.0.0.1', '\r\nTransfer-Encoding: chunked'), [chunk, chunk]);
    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({ code: 'TOO_LARGE', limit_bytes: limit });
    await expect(pending).rejects.toThrow(/no complete reply/); // still waiting for the rest: not refused
    expect(await monitorCount(server)).toBe(before);
  });

  it('a body at the limit is read', async () => {
    const body = JSON.stringify({ id: 'fits', description: '' });
    const padded = JSON.stringify({ id: 'fits', description: 'z'.repeat(limit - body.length) });
    expect(Buffer.byteLength(padded)).toBe(limit);
    const reply = await rawExchange(server.port, post('127.0.0.1', `\r\nContent-Length: ${limit}`), [padded]);
    expect(reply.status).toBe(201);
  });

  it('a Host that does not name this machine is 403 ORIGIN_REFUSED on loopback (DNS rebinding), and changes nothing', async () => {
    const before = await monitorCount(server);
    for (const host of ['evil.example', 'evil.example:8130', '127.0.0.1.evil.example', 'localhost.evil.example']) {
      const get = await rawExchange(server.port, `GET /mp/v0/discover HTTP/1.1\r\nHost: ${host}`);
      expect(get.status, host).toBe(403);
      expect(get.body).toMatchObject({ code: 'ORIGIN_REFUSED' });
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
      const body = '{"id":"rebound"}';
      const write = await rawExchange(server.port, post(host, `\r\nContent-Length: ${body.length}`), [body]);
      expect(write.status, host).toBe(403);
    }
    for (const host of ['localhost', `localhost:${server.port}`, '127.0.0.1', `[::1]:${server.port}`]) {
      expect((await rawExchange(server.port, `GET /mp/v0/discover HTTP/1.1\r\nHost: ${host}`)).status, host).toBe(200);
    }
    expect(await monitorCount(server)).toBe(before);
  });

  it('--allow-host accepts that name', async () => {
    const get = await rawExchange(rebindable.port, `GET /mp/v0/discover HTTP/1.1\r\nHost: evil.example:${rebindable.port}`);
    expect(get.status).toBe(200);
    const body = '{"id":"allowed-host"}';
    const write = await rawExchange(rebindable.port, post('evil.example', `\r\nContent-Length: ${body.length}`), [body]);
    expect(write.status).toBe(201);
    expect((await rawExchange(rebindable.port, 'GET /mp/v0/discover HTTP/1.1\r\nHost: other.example')).status).toBe(403);
  });
});
