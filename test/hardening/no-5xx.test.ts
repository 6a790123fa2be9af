// Issue 15 point 3: inputs that used to reach SQLite or the JSON encoder and
// come back as 503 (or a silent 200 stream) are refused with 400 naming the
// limit; anything unexpected that still reaches the top is a logged 500 with
// a request id.
import { describe, expect, it } from 'vitest';
import { asProtocolError, ProtocolError, setInternalErrorLog } from '../../src/protocol/errors.ts';
import { internalErrorResponse } from '../../src/transport/internal-error.ts';
import { call, createMonitor, subscribe } from '../support/client.ts';
import { openSse } from '../support/sse.ts';
import { transports } from '../support/server-process.ts';
import { useServer } from '../http/fixtures.ts';

const manyTags = (n: number) => Array.from({ length: n }, (_, i) => `%23t${i}=v`).join('&');
const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const deepArray = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe.each(transports)('no 5xx from oversized filters and deep JSON-RPC over %s', (transport) => {
  const server = useServer({ transport });

  it('refuses ~1,000 inline #tag keys with 400 naming the limit, on pull and on stream', async () => {
    const m = await createMonitor(server.base, { visibility: 'public' });
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: 'tags' });
    const pull = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?${manyTags(1000)}`, { token: sub.token });
    expect(pull.status).toBe(400);
    expect(pull.body).toMatchObject({ code: 'INVALID_FILTER', limit: 20 });
    expect(pull.body.error).toMatch(/20/);
    const stream = await openSse(`${server.base}/subscriptions/${sub.id}/stream?${manyTags(1000)}`, { authorization: `Bearer ${sub.token}` });
    expect(stream.status).toBe(400);
    expect(stream.errorBody).toMatchObject({ code: 'INVALID_FILTER', limit: 20 });
    const stored = await call(server.base, 'POST', '/subscriptions', {
      token: m.ownerToken,
      body: { monitor: m.id, subscriber: 'stored', filter: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`#t${i}`, 'v'])) },
    });
    expect(stored.status).toBe(400);
    expect(stored.body.error).toMatch(/filter/);
    const fine = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?${manyTags(20)}`, { token: sub.token });
    expect(fine.status).toBe(200);
  });

  it('refuses JSON-RPC params nested thousands deep with 400 naming the limit', async () => {
    const m = await createMonitor(server.base);
    const bodies = [
      `{"jsonrpc":"2.0","id":1,"method":"monitors/publish","params":{"id":"${m.id}","type":"a.b","data":${deepObject(8000)}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"monitors/get","params":{"id":"${m.id}","x":${deepArray(4100)}}}`,
      `[{"jsonrpc":"2.0","id":1,"method":"monitors/get","params":${deepArray(4100)}}]`,
    ];
    for (const rawBody of bodies) {
      const reply = await call(server.base, 'POST', '/rpc', { rawBody, token: m.ownerToken, headers: { 'content-type': 'application/json' } });
      // A batch answers each call; the deep one is refused with its id.
      const batch = rawBody.startsWith('[');
      expect(reply.status, JSON.stringify(reply.body).slice(0, 300)).toBe(batch ? 200 : 400);
      const refusal = batch ? reply.body[0] : reply.body;
      expect(refusal).toMatchObject({ id: 1, error: { code: -32600, data: { code: 'INVALID', limit: 100 } } });
      expect(refusal.error.message).toMatch(/100 levels/);
    }
    const http = await call(server.base, 'POST', `/monitors/${m.id}/observations`, {
      rawBody: `{"type":"a.b","data":${deepObject(8000)}}`,
      token: m.ownerToken,
      headers: { 'content-type': 'application/json' },
    });
    expect(http.status).toBe(400);
    expect(http.body).toMatchObject({ code: 'INVALID', limit: 100 });
  });
});

describe('an unexpected failure at the top', () => {
  it('is a logged 500 INTERNAL with a request id', () => {
    const lines: string[] = [];
    setInternalErrorLog((line) => lines.push(line));
    try {
      const response = internalErrorResponse(new TypeError('boom'), 'GET /x');
      expect(response.status).toBe(500);
      const body = JSON.parse(String(response.body));
      expect(body).toMatchObject({ code: 'INTERNAL', request_id: expect.stringMatching(/^[0-9a-f]{12}$/) });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(body.request_id);
      expect(lines[0]).toContain('boom');
      const store = asProtocolError(Object.assign(new Error('disk full'), { code: 'SQLITE_FULL' }));
      expect(store.status).toBe(503);
      expect(asProtocolError(new ProtocolError('INVALID', 'x')).status).toBe(400);
    } finally {
      setInternalErrorLog((line) => process.stderr.write(`${line}\n`));
    }
  });
});

describe.each(transports)('unknown query keys over %s (issue 15 point 7)', (transport) => {
  const server = useServer({ transport });

  it('refuses ?__proto__=1 and any other query key on routes without filters', async () => {
    const m = await createMonitor(server.base);
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: 'q' }, m.ownerToken);
    for (const path of ['/discover', '/monitors', `/monitors/${m.id}`, `/monitors/${m.id}/state`]) {
      for (const query of ['__proto__=1', 'constructor=x', 'verbose=true']) {
        const reply = await call(server.base, 'GET', `${path}?${query}`, { token: m.ownerToken });
        expect(reply.status, `${path}?${query}`).toBe(400);
        expect(reply.body).toMatchObject({ code: 'INVALID', invalid: [query.split('=')[0]] });
      }
    }
    const post = await call(server.base, 'POST', `/subscriptions/${sub.id}/ack?force=1`, { token: sub.token, body: { cursor: 1 } });
    expect(post.status).toBe(400);
    const proto = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?__proto__=1`, { token: sub.token });
    expect(proto.status).toBe(400);
    expect(proto.body).toMatchObject({ code: 'INVALID_FILTER', invalid: ['__proto__'] });
    expect((await call(server.base, 'GET', '/discover')).status).toBe(200);
    expect((await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?limit=5`, { token: sub.token })).status).toBe(200);
  });
});
