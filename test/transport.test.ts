// One suite, run against both transports over real sockets.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FullResponse, HttpHandler, HttpRequest, HttpTransport, StreamSink } from '../src/transport/http-types.ts';
import { createNodeHttpTransport } from '../src/transport/node-http-transport.ts';
import { createTransport } from '../src/transport/select-transport.ts';
import { createUwsTransport } from '../src/transport/uws-transport.ts';
import { probeUws } from '../src/transport/uws/native.ts';
import { normalizeRemoteAddress } from '../src/transport/uws/wire.ts';

const maxBodyBytes = 1024;
const maxStreamBufferBytes = 1024 * 1024;
const tooLarge = (limit: number): FullResponse => ({
  kind: 'full',
  status: 413,
  headers: { 'content-type': 'text/plain' },
  body: `over ${limit} bytes`,
});

const factories = {
  uws: createUwsTransport,
  node: createNodeHttpTransport,
} satisfies Record<HttpTransport['name'], () => HttpTransport>;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function full(body: string | Buffer, status = 200, headers: Record<string, string> = {}): FullResponse {
  return { kind: 'full', status, headers, body };
}

interface Reply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

function readReply(res: IncomingMessage): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () =>
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
    );
    res.on('error', reject);
  });
}

/** Sends a raw HTTP request and decodes the chunked reply, keeping the chunk boundaries. */
function fetchChunks(port: number, path: string): Promise<{ head: string; chunks: string[] }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`);
    });
    let buffered = Buffer.alloc(0);
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      const parsed = parseChunked(buffered);
      if (parsed) {
        socket.destroy();
        resolve(parsed);
      }
    });
    socket.on('error', reject);
  });
}

function parseChunked(raw: Buffer): { head: string; chunks: string[] } | undefined {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const chunks: string[] = [];
  let at = headEnd + 4;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const sizeLine = raw.subarray(at, lineEnd).toString();
    const size = Number.parseInt(sizeLine, 16);
    if (!/^[0-9a-f]+$/i.test(sizeLine)) throw new Error(`bad chunk size line ${JSON.stringify(sizeLine.slice(0, 40))}`);
    if (size === 0) return { head: raw.subarray(0, headEnd).toString(), chunks };
    if (raw.length < lineEnd + 2 + size + 2) return undefined;
    chunks.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size).toString());
    at = lineEnd + 2 + size + 2;
  }
}

describe.each(Object.keys(factories) as Array<keyof typeof factories>)('%s transport', (name) => {
  let transport: HttpTransport;
  let port: number;
  let handler: HttpHandler;
  let handlerCalls: number;

  beforeEach(async () => {
    handlerCalls = 0;
    handler = () => full('unset');
    transport = factories[name]();
    ({ port } = await transport.listen(
      (request) => {
        handlerCalls += 1;
        return handler(request);
      },
      { host: '127.0.0.1', port: 0, maxBodyBytes, maxStreamBufferBytes, tooLarge },
    ));
  });

  afterEach(async () => {
    await transport.close();
  });

  it('listens on a free port when given port 0 and passes method, path, query, headers and peer', async () => {
    expect(port).toBeGreaterThan(0);
    let seen: HttpRequest | undefined;
    let peer: string | undefined;
    handler = (request) => {
      seen = request;
      // The peer is read while the request is open (uWS reads it only when asked, and not once the reply is sent).
      peer = request.remoteAddress;
      return full('{"ok":true}', 201, { 'content-type': 'application/json', 'x-reply': 'yes' });
    };

    const response = await fetch(`http://127.0.0.1:${port}/mp/v0/a%20b?x=1&y=two`, { headers: { 'X-Thing': 'v' } });

    expect(response.status).toBe(201);
    expect(response.headers.get('x-reply')).toBe('yes');
    expect(await response.json()).toEqual({ ok: true });
    expect(seen).toMatchObject({ method: 'GET', path: '/mp/v0/a%20b', query: 'x=1&y=two' });
    expect(peer).toBe('127.0.0.1');
    expect(seen?.headers['x-thing']).toBe('v');
    expect(seen?.body.length).toBe(0);
  });

  it('gives an empty query when there is none and joins repeated headers', async () => {
    let seen: HttpRequest | undefined;
    handler = (request) => {
      seen = request;
      return full('');
    };
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/plain', headers: { 'x-multi': ['a', 'b'] } }, resolve);
      req.on('error', reject);
      req.end();
    });
    await readReply(response);

    expect(seen?.query).toBe('');
    expect(seen?.path).toBe('/plain');
    expect(seen?.headers['x-multi']).toBe('a, b');
  });

  it('echoes a POST body', async () => {
    handler = (request) => full(request.body);
    const body = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256));

    const response = await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', body });

    expect(Buffer.from(await response.arrayBuffer())).toEqual(body);
  });

  it('reads a chunked body that stays under the limit', async () => {
    handler = (request) => full(request.body);
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/echo', method: 'POST' }, resolve);
      req.on('error', reject);
      req.write('a'.repeat(300));
      setTimeout(() => req.end('b'.repeat(300)), 20);
    });
    expect((await readReply(response)).body).toBe('a'.repeat(300) + 'b'.repeat(300));
  });

  it('answers tooLarge without calling the handler when Content-Length is over the limit', async () => {
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path: '/big', method: 'POST', headers: { 'content-length': 10_000_000 } },
        resolve,
      );
      req.on('error', reject);
      req.flushHeaders(); // no body is ever sent: the reply must not wait for it
    });
    const reply = await readReply(response);

    expect(reply.status).toBe(413);
    expect(reply.body).toBe(`over ${maxBodyBytes} bytes`);
    expect(handlerCalls).toBe(0);
  });

  it('answers tooLarge as soon as a chunked body passes the limit', async () => {
    let piecesSent = 0;
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/big', method: 'POST' }, resolve);
      let answered = false;
      req.on('response', () => {
        answered = true;
      });
      // The server closes the connection while we may still be writing.
      req.on('error', (error) => {
        if (!answered) reject(error);
      });
      const sendPiece = () => {
        if (answered || piecesSent >= 100) return;
        piecesSent += 1;
        req.write('x'.repeat(256));
        setTimeout(sendPiece, 5);
      };
      sendPiece();
    });
    const reply = await readReply(response).catch(() => ({ status: response.statusCode, body: '' }));

    expect(reply.status).toBe(413);
    expect(handlerCalls).toBe(0);
    // 1024 bytes pass the limit on the 5th piece of 256; allow for pieces in flight.
    expect(piecesSent).toBeLessThan(30);
  });

  it('aborts the request signal when the client disconnects during a slow handler', async () => {
    const started = deferred();
    const aborted = deferred<boolean>();
    handler = (request) => {
      started.resolve();
      return new Promise((resolve) => {
        request.signal.addEventListener('abort', () => {
          aborted.resolve(true);
          resolve(full('too late'));
        });
      });
    };
    const req = httpRequest({ host: '127.0.0.1', port, path: '/slow' });
    req.on('error', () => {});
    req.end();
    await started.promise;
    req.destroy();

    expect(await aborted.promise).toBe(true);
  });

  it('streams chunks in order and sends the writes of one turn as one chunk', async () => {
    const closed = deferred<boolean>();
    let bufferedAfterFirstTurn = 0;
    const small = Array.from({ length: 1000 }, (_, i) => `${i},`);
    handler = () => ({
      kind: 'stream',
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      start(sink) {
        sink.onClose(() => closed.resolve(true));
        sink.write('a');
        sink.write('b');
        sink.write('c');
        bufferedAfterFirstTurn = sink.bufferedBytes();
        setTimeout(() => {
          for (const piece of small) sink.write(piece);
          setTimeout(() => sink.end(), 10);
        }, 10);
      },
    });

    const { head, chunks } = await fetchChunks(port, '/events');

    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head.toLowerCase()).toContain('content-type: text/event-stream');
    expect(chunks).toEqual(['abc', small.join('')]);
    expect(bufferedAfterFirstTurn).toBeGreaterThanOrEqual(3);
    expect(await closed.promise).toBe(true);
  });

  it('disconnects a client that stops reading and fires onClose, keeping the buffer bounded', async () => {
    const finished = deferred<void>();
    let closeFired = false;
    let refused = false;
    let written = 0;
    let peakBuffered = 0;
    const piece = 'x'.repeat(64 * 1024);
    const giveUpAfter = 64 * 1024 * 1024;
    handler = () => ({
      kind: 'stream',
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      start(sink: StreamSink) {
        sink.onClose(() => {
          closeFired = true;
          finished.resolve();
        });
        const pump = () => {
          for (let i = 0; i < 4; i++) {
            if (!sink.write(piece)) {
              refused = true;
              return;
            }
            written += piece.length;
            peakBuffered = Math.max(peakBuffered, sink.bufferedBytes());
          }
          if (written < giveUpAfter) setImmediate(pump);
          else finished.resolve();
        };
        pump();
      },
    });
    const socket: Socket = connect(port, '127.0.0.1', () => {
      socket.write('GET /events HTTP/1.1\r\nHost: test\r\n\r\n');
      socket.pause(); // never reads: the kernel buffers fill, then the server's
    });
    socket.on('error', () => {});

    await finished.promise;
    socket.destroy();

    expect(closeFired).toBe(true);
    expect(refused).toBe(true);
    expect(peakBuffered).toBeLessThanOrEqual(maxStreamBufferBytes);
    // Loopback kernel buffers absorb a few MB before the server has to hold anything.
    expect(written).toBeLessThan(32 * 1024 * 1024);
  });

  it.each([
    ['stays open', false],
    ['ends at once', true],
  ])('a reader that pauses and resumes gets every byte when the stream then %s', async (_, endAtOnce) => {
    // A looser buffer limit, so that the pause is survived and the backpressure path runs.
    const roomy = factories[name]();
    const piece = 'y'.repeat(64 * 1024);
    const pieces = 160; // 10 MB: more than loopback kernel buffers hold
    const { port: roomyPort } = await roomy.listen(
      () => ({
        kind: 'stream',
        status: 200,
        headers: {},
        start(sink) {
          let sent = 0;
          const pump = () => {
            for (let i = 0; i < 8 && sent < pieces; i++, sent++) sink.write(piece);
            if (sent < pieces) setImmediate(pump);
            else {
              sink.write('END');
              if (endAtOnce) sink.end();
            }
          };
          pump();
        },
      }),
      { host: '127.0.0.1', port: 0, maxBodyBytes, maxStreamBufferBytes: 64 * 1024 * 1024, tooLarge },
    );
    try {
      const received = await new Promise<string>((resolve, reject) => {
        const socket = connect(roomyPort, '127.0.0.1', () => {
          socket.write('GET /events HTTP/1.1\r\nHost: test\r\n\r\n');
          socket.pause();
          setTimeout(() => socket.resume(), 300);
        });
        const chunks: Buffer[] = [];
        const done = () => {
          socket.destroy();
          resolve(Buffer.concat(chunks).toString('latin1'));
        };
        socket.on('data', (data: Buffer) => {
          chunks.push(data);
          const tail = Buffer.concat(chunks.slice(-2)).toString('latin1');
          if (endAtOnce ? tail.endsWith('\r\n0\r\n\r\n') : tail.includes('END')) done();
        });
        socket.on('error', reject);
      });
      // An open stream has no terminator yet; add one (node:http frames "size CRLF data CRLF", uWS "CRLF size CRLF data").
      const terminator = endAtOnce ? '' : received.endsWith('\r\n') ? '0\r\n\r\n' : '\r\n0\r\n\r\n';
      const parsed = parseChunked(Buffer.from(received + terminator, 'latin1'));
      expect(parsed?.chunks.join('')).toBe(piece.repeat(pieces) + 'END');
    } finally {
      await roomy.close();
    }
  });

  it('close() ends open streams cleanly, fires their onClose and stops listening', async () => {
    const closed = deferred<boolean>();
    handler = () => ({
      kind: 'stream',
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      start(sink) {
        sink.onClose(() => closed.resolve(true));
        sink.write('hello\n');
      },
    });
    const response = await fetch(`http://127.0.0.1:${port}/events`);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('hello\n');

    await transport.close();

    expect(await closed.promise).toBe(true);
    // A clean end of the chunked body, not a reset: the client can tell a shutdown from a failure.
    expect((await reader.read()).done).toBe(true);
    await expect(fetch(`http://127.0.0.1:${port}/again`)).rejects.toThrow();
  });

  it('replies 500 when the handler throws', async () => {
    handler = () => {
      throw new Error('boom');
    };
    const response = await fetch(`http://127.0.0.1:${port}/boom`);
    expect(response.status).toBe(500);
  });
});

describe('transport selection', () => {
  it('normalizes the full-length IPv6 text uWS gives', () => {
    expect(normalizeRemoteAddress('0000:0000:0000:0000:0000:ffff:7f00:0001')).toBe('127.0.0.1');
    expect(normalizeRemoteAddress('0000:0000:0000:0000:0000:0000:0000:0001')).toBe('::1');
    expect(normalizeRemoteAddress('127.0.0.1')).toBe('127.0.0.1');
  });

  it('reports why uWS cannot load when there is no binary for the Node ABI', () => {
    const probe = probeUws('999');
    expect(probe.ok).toBe(false);
    expect(!probe.ok && probe.reason).toMatch(/no native binary .*ABI 999/);
  });

  it('picks uWS on auto when the native module loads here, and node:http on request', async () => {
    const native = probeUws().ok;
    // The package ships binaries for Node 16, 18 and 20 (ABI 93, 108, 115).
    expect(native).toBe(['93', '108', '115'].includes(process.versions.modules));
    const auto = await createTransport('auto');
    expect(auto.name).toBe(native ? 'uws' : 'node');
    expect(auto.fallbackReason === undefined).toBe(native);
    expect((await createTransport('node')).name).toBe('node');
  });
});
