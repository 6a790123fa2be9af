// §14 JSON-RPC 2.0 at POST /rpc: results, error numbers, batches, envelope errors.
import { type CheckContext, check } from '../check.ts';
import { ensure, equal, excerpt, fail } from '../expect.ts';
import { createMonitor, publish } from '../fixtures.ts';
import type { Wire } from '../wire-client.ts';

async function rpc(ctx: CheckContext, payload: unknown, token?: string, raw?: string) {
  const reply = raw === undefined ? await ctx.http.post('/rpc', payload, token) : await ctx.http.request('POST', '/rpc', { rawBody: raw, token });
  if (reply.status === 404 && reply.body?.code === 'NOT_FOUND') fail('POST /rpc is not served (404)');
  return reply;
}

const call = (method: string, params: unknown, id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params });

function rpcError(reply: Wire, number: number, what: string): Wire {
  const e = reply.body?.error;
  if (reply.body?.jsonrpc !== '2.0' || e?.code !== number || typeof e?.message !== 'string') fail(`${what} should be a JSON-RPC error ${number}: ${reply.label} ${excerpt(reply.body)}`);
  return e;
}

function rpcResult(reply: Wire, what: string): Wire {
  if (reply.body?.jsonrpc !== '2.0' || !('result' in (reply.body ?? {}))) fail(`${what} should succeed: ${reply.label} ${excerpt(reply.body)}`);
  return reply.body.result;
}

export const rpcChecks = [
  check('§14', 'MP-14-result', 'a call returns the HTTP success body as its result', async (ctx) => {
    const reply = await rpc(ctx, call('monitors/discover', {}, 'd1'));
    const result = rpcResult(reply, 'monitors/discover');
    equal(reply.body.id, 'd1', 'id echoed');
    const http = await ctx.http.get('/discover');
    equal(result, http.body, 'result of monitors/discover vs GET /discover');
  }),

  check('§14', 'MP-14-operations', 'params are the HTTP body plus path parameters; the bearer comes from the header or params.bearer', async (ctx) => {
    const id = ctx.unique('rpc');
    const created = rpcResult(await rpc(ctx, call('monitors/create', { id })), 'monitors/create');
    const token = created.owner_token;
    ensure(typeof token === 'string', `no owner_token in the result: ${excerpt(created)}`);
    const published = rpcResult(await rpc(ctx, call('monitors/publish', { id, type: 'conform.event', subject: 'x' }), token), 'monitors/publish with the header bearer');
    const viaParam = rpcResult(await rpc(ctx, call('monitors/publish', { id, type: 'conform.event', bearer: token })), 'monitors/publish with params.bearer');
    equal(viaParam.seq, published.seq + 1, 'seq of the second publish');
    const got = rpcResult(await rpc(ctx, call('monitors/get', { id, bearer: token })), 'monitors/get');
    equal(got.head, viaParam.seq, 'head via monitors/get');
    const sub = rpcResult(await rpc(ctx, call('feeds/subscribe', { monitor: id, subscriber: 'agent:rpc', filter: { types: 'conform.event' } }), token), 'feeds/subscribe');
    const page = rpcResult(await rpc(ctx, call('feeds/pull', { subscription: sub.subscription.id, limit: 1 }), sub.token), 'feeds/pull');
    equal(page.observations.map((o: Wire) => o.subject), ['x'], 'subjects of feeds/pull with limit 1');
    rpcResult(await rpc(ctx, call('feeds/ack', { subscription: sub.subscription.id, cursor: page.next }), sub.token), 'feeds/ack');
  }),

  check('§14', 'MP-14-error', 'a protocol error is {code: <seed number>, message, data: <error body>}', async (ctx) => {
    const missing = rpcError(await rpc(ctx, call('monitors/get', { id: ctx.unique('absent') })), -32006, 'monitors/get of a missing monitor');
    equal(missing.data?.code, 'NOT_FOUND', 'data.code');
    const m = await createMonitor(ctx, { visibility: 'public' });
    const vocab = rpcError(await rpc(ctx, call('monitors/publish', { id: m.id, type: 'conform.event', tier: 'gold' }), m.token), -32001, 'publish with tier gold');
    ensure(vocab.data?.code === 'UNKNOWN_VOCABULARY' && Array.isArray(vocab.data?.invalid), `data is not the full error body: ${excerpt(vocab.data)}`);
    rpcError(await rpc(ctx, call('monitors/publish', { id: m.id, type: 'conform.event' })), -32005, 'publish without a bearer');
  }),

  check('§14', 'MP-14-error-numbers', 'each protocol error carries the seed\'s JSON-RPC number', async (ctx) => {
    const m = await createMonitor(ctx, { visibility: 'public', capabilities: ['observe', 'act'] });
    const id = m.id;
    await publish(ctx, m, { type: 'conform.event', subject: 'job' });
    const sub = rpcResult(await rpc(ctx, call('feeds/subscribe', { monitor: id, subscriber: 'agent:a', capabilities: ['act'] }), m.token), 'feeds/subscribe');
    const other = rpcResult(await rpc(ctx, call('feeds/subscribe', { monitor: id, subscriber: 'agent:b', capabilities: ['act'] }), m.token), 'feeds/subscribe');
    const subscription = sub.subscription.id;
    rpcResult(await rpc(ctx, call('feeds/ack', { subscription, cursor: 2 }), sub.token), 'feeds/ack 2');
    rpcResult(await rpc(ctx, call('leases/claim', { subscription, subject: 'job' }), sub.token), 'leases/claim');
    const cases: [string, unknown, string | undefined, number, string][] = [
      ['feeds/subscribe', { monitor: id, subscriber: 'agent:c', filter: { colour: 1 } }, m.token, -32000, 'INVALID_FILTER'],
      ['monitors/publish', { id, type: 'conform.event', tier: 'src' }, m.token, -32002, 'TIER_NOT_ASSERTABLE'],
      ['feeds/ack', { subscription, cursor: -1 }, sub.token, -32003, 'INVALID'],
      ['feeds/subscribe', { monitor: id, subscriber: 'agent:d', capabilities: ['act'] }, undefined, -32004, 'CAPABILITY_MISSING'],
      ['feeds/pull', { subscription }, 'wrong', -32005, 'UNAUTHORIZED'],
      ['monitors/create', { id }, undefined, -32007, 'DUPLICATE'],
      ['feeds/ack', { subscription, cursor: 1 }, sub.token, -32008, 'CURSOR_BACKWARDS'],
      ['leases/claim', { subscription: other.subscription.id, subject: 'job' }, other.token, -32010, 'LEASE_HELD'],
      ['monitors/publish', { id, type: 'conform.event', on_behalf_of: 'human:mallory' }, m.token, -32014, 'PROVENANCE_CEILING'],
    ];
    for (const [method, params, bearer, number, code] of cases) {
      const e = rpcError(await rpc(ctx, call(method, params), bearer), number, `${method} answering ${code}`);
      equal(e.data?.code, code, `data.code of ${method}`);
    }
  }),

  check('§14', 'MP-14-batch', 'a batch answers each call with its id; notifications get no reply', async (ctx) => {
    const reply = await rpc(ctx, [call('monitors/discover', {}, 1), { jsonrpc: '2.0', method: 'monitors/discover', params: {} }, call('no/such', {}, 2)]);
    ensure(Array.isArray(reply.body), `a batch reply should be an array: ${reply.label} ${excerpt(reply.body)}`);
    equal(reply.body.map((r: Wire) => r.id).sort(), [1, 2], 'ids in the batch reply (the notification has none)');
    const second = reply.body.find((r: Wire) => r.id === 2);
    rpcError({ body: second, label: 'batch entry 2' }, -32601, 'unknown method inside a batch');
  }),

  check('§14', 'MP-14-notification', 'a single notification gets no reply body', async (ctx) => {
    const reply = await rpc(ctx, { jsonrpc: '2.0', method: 'monitors/discover', params: {} });
    ensure([200, 202, 204].includes(reply.status) && reply.text.trim() === '', `a notification got ${reply.label} ${excerpt(reply.text)}`);
  }),

  check('§14', 'MP-14-envelope-errors', 'parse error -32700, invalid request -32600, unknown method -32601', async (ctx) => {
    const parse = await rpc(ctx, undefined, undefined, '{"jsonrpc": "2.0", "method": ');
    rpcError(parse, -32700, 'a truncated JSON body');
    equal(parse.body.id, null, 'id of a parse error');
    rpcError(await rpc(ctx, { jsonrpc: '1.0', id: 3, method: 'monitors/discover' }), -32600, 'jsonrpc "1.0"');
    rpcError(await rpc(ctx, { jsonrpc: '2.0', id: 4, method: 7 }), -32600, 'a numeric method');
    rpcError(await rpc(ctx, call('monitors/explode', {}, 5)), -32601, 'an unknown method');
    rpcResult(await rpc(ctx, call('monitors/list', {}, 6)), 'monitors/list (positive control)');
  }),
];
