// A JSON-RPC client matches replies to calls by id: a call refused for its
// nesting depth or its size still gets its own id back whenever it can be
// read (the call itself, or the first bytes of a body refused unread).
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useServer } from '../http/fixtures.ts';
import { call } from '../support/client.ts';
import { transports } from '../support/server-process.ts';

const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const maxBody = 65_536;

/** POSTs `body` to /rpc, with a Content-Length or chunked in two pieces, and reads the reply. */
function post(url: string, body: string, framing: 'length' | 'chunked'): Promise<{ status: number; body: any }> {
  return new Promise((done, fail) => {
    const target = new URL(`${url}/mp/v0/rpc`);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (framing === 'length') headers['content-length'] = String(Buffer.byteLength(body));
    const req = request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    // The server may answer and close before the whole body is sent.
    req.on('error', (error) => (error as NodeJS.ErrnoException).code === 'EPIPE' || (error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : fail(error));
    const half = Math.floor(body.length / 2);
    req.write(body.slice(0, half));
    req.end(body.slice(half));
  });
}

describe.each(transports)('JSON-RPC refusals keep the id over %s', (transport) => {
  const server = useServer({ transport, args: ['--max-body', String(maxBody)] });

  it('answers a call nested too deep with its own id, alone and inside a batch', async () => {
    const deep = `{"jsonrpc":"2.0","id":"deep-1","method":"monitors/get","params":{"id":"x","data":${deepObject(200)}}}`;
    const single = await call(server.base, 'POST', '/rpc', { rawBody: deep, headers: { 'content-type': 'application/json' } });
    expect(single.status).toBe(400);
    expect(single.body).toMatchObject({ jsonrpc: '2.0', id: 'deep-1', error: { code: -32600, data: { code: 'INVALID', limit: 100 } } });
    const batch = await call(server.base, 'POST', '/rpc', {
      rawBody: `[${deep.replace('deep-1', 'deep-2')},{"jsonrpc":"2.0","id":7,"method":"monitors/discover"}]`,
      headers: { 'content-type': 'application/json' },
    });
    expect(batch.status).toBe(200);
    expect(batch.body).toHaveLength(2);
    expect(batch.body[0]).toMatchObject({ id: 'deep-2', error: { code: -32600, data: { code: 'INVALID', limit: 100 } } });
    expect(batch.body[1]).toMatchObject({ id: 7, result: { protocol: expect.any(String) } });
  });

  it('answers a call too large to read with its id, with a Content-Length and chunked', async () => {
    const params = JSON.stringify({ id: 'x', type: 'a.b', data: { blob: 'x'.repeat(maxBody) } });
    for (const framing of ['length', 'chunked'] as const) {
      const idFirst = await post(server.url, `{"jsonrpc":"2.0","id":"big-${framing}","method":"monitors/publish","params":${params}}`, framing);
      expect(idFirst.status).toBe(413);
      expect(idFirst.body).toMatchObject({ jsonrpc: '2.0', id: `big-${framing}`, error: { data: { code: 'TOO_LARGE', limit_bytes: maxBody } } });
      // An id after the params cannot be read from the first bytes: null, as JSON-RPC says.
      const idLast = await post(server.url, `{"jsonrpc":"2.0","method":"monitors/publish","params":${params},"id":9}`, framing);
      expect(idLast.status).toBe(413);
      expect(idLast.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'TOO_LARGE' } } });
    }
    // Elsewhere the refusal is the plain protocol error, as before.
    const plain = await call(server.base, 'POST', '/monitors', { body: { description: 'x'.repeat(maxBody) } });
    expect(plain.status).toBe(413);
    expect(plain.body).toMatchObject({ code: 'TOO_LARGE', limit_bytes: maxBody });
  });
});
