import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { type ServerProcess, startServerProcess, transports } from '../support/server-process.ts';

async function rpc(base: string, payload: unknown, token?: string) {
  return call(base, 'POST', '/rpc', { body: payload, token });
}

/** The same scenario through two bindings; results are compared field by field. */
async function scenarioOverHttp(base: string, id: string) {
  const created = await call(base, 'POST', '/monitors', { body: { id, visibility: 'public', capabilities: ['observe', 'act'] } });
  const owner = created.body.owner_token;
  const published = await call(base, 'POST', `/monitors/${id}/observations`, { token: owner, body: { type: 'work.item', subject: 'task-1' } });
  const subscribed = await call(base, 'POST', '/subscriptions', { token: owner, body: { monitor: id, subscriber: 'agent:w', capabilities: ['act'] } });
  const sub = subscribed.body.subscription.id;
  const token = subscribed.body.token;
  const pulled = await call(base, 'GET', `/subscriptions/${sub}/pull?limit=10`, { token });
  const acked = await call(base, 'POST', `/subscriptions/${sub}/ack`, { token, body: { cursor: pulled.body.next } });
  const claimed = await call(base, 'POST', `/subscriptions/${sub}/leases/claim`, { token, body: { subject: 'task-1' } });
  const completed = await call(base, 'POST', `/subscriptions/${sub}/leases/complete`, { token, body: { subject: 'task-1', outcome: 'done' } });
  const state = await call(base, 'GET', `/monitors/${id}/state`);
  return { created, published, subscribed, pulled, acked, claimed, completed, state };
}

async function scenarioOverRpc(base: string, id: string) {
  const one = async (method: string, params: Record<string, unknown>) => {
    const reply = await rpc(base, { jsonrpc: '2.0', id: method, method, params });
    expect(reply.status).toBe(200);
    expect(reply.body.jsonrpc).toBe('2.0');
    expect(reply.body.id).toBe(method);
    return reply.body.result ?? reply.body.error;
  };
  const created = await one('monitors/create', { id, visibility: 'public', capabilities: ['observe', 'act'] });
  const bearer = created.owner_token;
  const published = await one('monitors/publish', { id, bearer, type: 'work.item', subject: 'task-1' });
  const subscribed = await one('feeds/subscribe', { bearer, monitor: id, subscriber: 'agent:w', capabilities: ['act'] });
  const subscription = subscribed.subscription.id;
  const token = subscribed.token;
  const pulled = await one('feeds/pull', { subscription, bearer: token, limit: 10 });
  const acked = await one('feeds/ack', { subscription, bearer: token, cursor: pulled.next });
  const claimed = await one('leases/claim', { subscription, bearer: token, subject: 'task-1' });
  const completed = await one('leases/complete', { subscription, bearer: token, subject: 'task-1', outcome: 'done' });
  const state = await one('monitors/state', { id });
  return { created, published, subscribed, pulled, acked, claimed, completed, state };
}

describe.each(transports)('JSON-RPC 2.0 over %s', (transport) => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({ transport });
  });
  afterAll(() => server?.stop());

  it('runs the same scenario with the same results as the HTTP routes', async () => {
    const http = await scenarioOverHttp(server.base, `http-${transport}`);
    const viaRpc = await scenarioOverRpc(server.base, `rpc-${transport}`);
    expect(http.published.body.seq).toBe(viaRpc.published.seq);
    expect(http.pulled.body.observations.map((o: any) => [o.id, o.type, o.subject])).toEqual(
      viaRpc.pulled.observations.map((o: any) => [o.id, o.type, o.subject]),
    );
    expect(http.pulled.body.next).toBe(viaRpc.pulled.next);
    expect(http.acked.body.cursor).toBe(viaRpc.acked.cursor);
    expect(http.claimed.status).toBe(201);
    expect(viaRpc.claimed.lease.state).toBe('held');
    expect(http.completed.body.lease.state).toBe('completed');
    expect(viaRpc.completed.lease.state).toBe('completed');
    for (const field of ['head', 'counters', 'contradictions_open', 'live', 'computed_from'] as const) {
      expect(viaRpc.state[field]).toEqual(http.state.body[field]);
    }
    expect(viaRpc.state.confidence.gaps).toEqual(http.state.body.confidence.gaps);
  });

  it('answers a batch in one reply, skips notifications and numbers errors as the protocol says', async () => {
    const created = await rpc(server.base, { jsonrpc: '2.0', id: 1, method: 'monitors/create', params: { visibility: 'public' } });
    const id = created.body.result.monitor.id;
    const bearer = created.body.result.owner_token;
    const batch = await rpc(server.base, [
      { jsonrpc: '2.0', id: 'a', method: 'monitors/publish', params: { id, bearer, type: 'x.y' } },
      { jsonrpc: '2.0', method: 'monitors/publish', params: { id, bearer, type: 'x.y' } },
      { jsonrpc: '2.0', id: 'b', method: 'monitors/publish', params: { id, bearer, type: 'x.y', tier: 'nonsense' } },
      { jsonrpc: '2.0', id: 'c', method: 'monitors/publish', params: { id, bearer: 'wrong', type: 'x.y' } },
      { jsonrpc: '2.0', id: 'd', method: 'monitors/get', params: { id: 'no-such-monitor' } },
    ]);
    expect(batch.status).toBe(200);
    expect(batch.body).toHaveLength(4);
    const byId = Object.fromEntries(batch.body.map((r: any) => [r.id, r]));
    expect(byId.a.result.seq).toBeGreaterThan(1);
    expect(byId.b.error.code).toBe(-32001);
    expect(byId.b.error.data.code).toBe('UNKNOWN_VOCABULARY');
    expect(byId.b.error.data.invalid).toEqual(['tier:nonsense']);
    expect(byId.c.error.code).toBe(-32005);
    expect(byId.d.error.code).toBe(-32006);
    const state = await rpc(server.base, { jsonrpc: '2.0', id: 9, method: 'monitors/state', params: { id } });
    // The notification was executed: two publishes were stored.
    expect(state.body.result.counters.observations).toBe(2);
  });

  it('uses the standard envelope errors', async () => {
    const parse = await call(server.base, 'POST', '/rpc', { rawBody: '{"jsonrpc": "2.0", "method": ' });
    expect(parse.body.error.code).toBe(-32700);
    expect(parse.body.id).toBeNull();
    const empty = await rpc(server.base, []);
    expect(empty.body.error.code).toBe(-32600);
    const noVersion = await rpc(server.base, { id: 1, method: 'monitors/discover' });
    expect(noVersion.body.error.code).toBe(-32600);
    const unknown = await rpc(server.base, { jsonrpc: '2.0', id: 2, method: 'monitors/explode' });
    expect(unknown.body.error.code).toBe(-32601);
    const notification = await rpc(server.base, { jsonrpc: '2.0', method: 'monitors/discover' });
    expect(notification.status).toBe(204);
    const ok = await rpc(server.base, { jsonrpc: '2.0', id: 3, method: 'monitors/discover' });
    expect(ok.body.result.protocol).toBe('monitor-protocol');
  });

  it('takes the bearer from the Authorization header when params carry none', async () => {
    const created = await rpc(server.base, { jsonrpc: '2.0', id: 1, method: 'monitors/create', params: {} });
    const { owner_token: owner, monitor } = created.body.result;
    const hidden = await rpc(server.base, { jsonrpc: '2.0', id: 2, method: 'monitors/get', params: { id: monitor.id } });
    expect(hidden.body.error.data.code).toBe('NOT_FOUND');
    const seen = await rpc(server.base, { jsonrpc: '2.0', id: 3, method: 'monitors/get', params: { id: monitor.id } }, owner);
    expect(seen.body.result.id).toBe(monitor.id);
  });
});
