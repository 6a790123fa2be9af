// A client written from the base specification alone (issue 41): the monitor
// fields cadence, rules and budget; the ack reply {cursor, head, lag};
// `redelivered` as a whole number; `reset_policy` defaulting to `none`; and
// the arguments the reference's tools take (`filter` on pull, `rule` on a
// configure, `note` on a lease) over HTTP and JSON-RPC.
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { openSse } from '../support/sse.ts';
import { fresh, readFeed, useServer, vigilType } from './fixtures.ts';

const admin = 'admin-token-for-base-clients';
/** A rule's `then` (the base protocol's name), spread in: an object literal with a `then` key reads as a promise to a linter. */
const then = (action: string) => Object.fromEntries([['then', action]]);

const cadence = { heartbeat_seconds: 300, schedule: '0 * * * *', event_driven: false };
const rules = [
  { id: 'page-on-failure', version: '1', when: { types: ['build.failed'] }, ...then('escalate:oncall'), derived_from: ['runbook-7'], reason: 'failures page' },
  { id: 'log-all', when: {}, ...then('log') },
];
const budget = { currency: 'USD', per_day: 12.5 };

describe('clients of the base specification', () => {
  const server = useServer({ args: [`--allow-admin=${admin}`] });
  const rpc = async (method: string, params: Record<string, unknown>, token?: string) => {
    const reply = await call(server.base, 'POST', '/rpc', { token, body: { jsonrpc: '2.0', id: 1, method, params } });
    expect(reply.status).toBe(200);
    return reply.body as { result?: any; error?: { code: number; message: string; data: any } };
  };

  it('creates a monitor with cadence, rules and budget, returns them, and lets update change them', async () => {
    const created = await call(server.base, 'POST', '/monitors', { body: { id: fresh('fields'), types: ['build.failed'], cadence, rules, budget } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.monitor).toMatchObject({ cadence, rules, budget });
    const { id } = created.body.monitor;
    const token = created.body.owner_token;
    const read = await call(server.base, 'GET', `/monitors/${id}`, { token });
    expect(read.body).toMatchObject({ cadence, rules, budget });

    const patch = { cadence: { heartbeat_seconds: 60 }, rules: [{ id: 'only', when: { subjects: ['main'] }, ...then('notify:human') }], budget: null };
    const updated = await call(server.base, 'POST', `/monitors/${id}/update`, { token, body: { reason: 'tighter', rule: 'ops-review', patch } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.monitor).toMatchObject({ ...patch, version: 2 });
    const configured = (await readFeed(server.base, id, token)).find((o) => o.type === vigilType('configured') && o.data.payload.action === 'update');
    expect(configured.data.payload).toMatchObject({
      reason: 'tighter',
      rule: 'ops-review',
      diff: { cadence: { before: cadence, after: patch.cadence }, rules: { before: rules, after: patch.rules }, budget: { before: budget, after: null } },
    });
  });

  it('serves the defaults when a create leaves them out: event driven, no rules, no budget', async () => {
    const { reply } = await createMonitor(server.base, {});
    expect(reply.body.monitor).toMatchObject({ cadence: { event_driven: true }, rules: [], budget: null });
  });

  it('refuses a bad cadence, rule or budget, naming the field, and stores nothing', async () => {
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ cadence: { heartbeat_seconds: 'often' } }, 400, 'INVALID', 'cadence.heartbeat_seconds'],
      [{ cadence: { event_driven: 'yes' } }, 400, 'INVALID', 'cadence.event_driven'],
      [{ cadence: 'hourly' }, 400, 'INVALID', 'cadence'],
      [{ cadence: { schedule: 'every hour' } }, 400, 'INVALID', 'cadence.schedule'],
      [{ cadence: { schedule: '0 0 * * * *' } }, 400, 'INVALID', 'cadence.schedule'],
      [{ rules: [{ id: 'x', when: {}, ...then('explode') }] }, 400, 'UNKNOWN_VOCABULARY', 'rules.0.then'],
      [{ rules: [{ id: 'x', ...then('log') }] }, 400, 'INVALID', 'rules.0.when'],
      [{ rules: [{ id: 'x', when: { colour: 'red' }, ...then('log') }] }, 400, 'INVALID_FILTER', 'rules.0.when'],
      [{ rules: [{ id: 'x', when: { types: ['never.declared'] }, ...then('log') }] }, 400, 'INVALID_FILTER', 'rules.0.when'],
      [{ rules: [{ id: 'x', when: {}, ...then('log') }, { id: 'x', when: {}, ...then('label') }] }, 400, 'INVALID', 'rules.1.id'],
      [{ budget: { per_day: -1 } }, 400, 'INVALID', 'budget.per_day'],
      [{ budget: 'cheap' }, 400, 'INVALID', 'budget'],
    ];
    for (const [body, status, code, field] of cases) {
      const id = fresh('bad');
      const reply = await call(server.base, 'POST', '/monitors', { body: { id, ...body } });
      expect([reply.status, reply.body.code, reply.body.field], JSON.stringify(body)).toEqual([status, code, field]);
      expect(reply.body.error).toContain(field);
      expect((await call(server.base, 'GET', `/monitors/${id}`)).status).toBe(404);
    }
    const m = await createMonitor(server.base, {});
    const patched = await call(server.base, 'POST', `/monitors/${m.id}/update`, { token: m.ownerToken, body: { reason: 'r', patch: { rules: [{ id: 'a', when: {}, ...then('run:') }] } } });
    expect([patched.status, patched.body.code, patched.body.field]).toEqual([400, 'UNKNOWN_VOCABULARY', 'patch.rules.0.then']);
  });

  it('answers an ack with {cursor, head, lag} at the top level, beside the subscription', async () => {
    const m = await createMonitor(server.base, { types: ['app.n'] });
    for (let i = 0; i < 3; i++) await publish(server.base, m.id, m.ownerToken, { type: 'app.n', subject: `s${i}` });
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: fresh('acker'), filter: { types: 'app.n' } }, m.ownerToken);
    const page = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?limit=2`, { token: sub.token });
    const acked = await call(server.base, 'POST', `/subscriptions/${sub.id}/ack`, { token: sub.token, body: { cursor: page.body.next } });
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject({ cursor: page.body.next, head: page.body.head, lag: 1 });
    expect(acked.body.subscription).toMatchObject({ cursor: page.body.next, lag: 1 });
    const viaRpc = await rpc('feeds/ack', { subscription: sub.id, cursor: page.body.next }, sub.token);
    expect(viaRpc.result).toMatchObject({ cursor: page.body.next, head: page.body.head, lag: 1 });
  });

  it('counts the redelivered observations of a pull page as a whole number', async () => {
    const m = await createMonitor(server.base, { types: ['app.n'] });
    for (let i = 0; i < 2; i++) await publish(server.base, m.id, m.ownerToken, { type: 'app.n', subject: `s${i}` });
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: fresh('again'), filter: { types: 'app.n' } }, m.ownerToken);
    const pull = () => call(server.base, 'GET', `/subscriptions/${sub.id}/pull`, { token: sub.token });
    expect((await pull()).body.redelivered).toBe(0);
    await publish(server.base, m.id, m.ownerToken, { type: 'app.n', subject: 's2' });
    const second = await pull();
    expect(second.body.redelivered).toBe(2);
    expect(second.body.observations.map((o: { redelivered?: boolean }) => o.redelivered === true)).toEqual([true, true, false]);
  });

  it('defaults reset_policy to none: below the retention floor a pull or a stream is 410 until the client acts', async () => {
    const m = await createMonitor(server.base, { types: ['app.n'] });
    for (let i = 0; i < 4; i++) await publish(server.base, m.id, m.ownerToken, { type: 'app.n', subject: `s${i}` });
    const plain = await subscribe(server.base, { monitor: m.id, subscriber: fresh('plain') }, m.ownerToken);
    expect(plain.reply.body.subscription.reset_policy).toBe('none');
    const lenient = await subscribe(server.base, { monitor: m.id, subscriber: fresh('lenient'), reset_policy: 'earliest' }, m.ownerToken);
    const compacted = await call(server.base, 'POST', '/admin/compact', { token: admin, body: { monitor: m.id, upto_seq: 3 } });
    expect(compacted.body.retention_floor).toBe(4);

    const refused = await call(server.base, 'GET', `/subscriptions/${plain.id}/pull`, { token: plain.token });
    expect([refused.status, refused.body.code, refused.body.retention_floor]).toEqual([410, 'CURSOR_EXPIRED', 4]);
    const streamRefused = await openSse(`${server.base}/subscriptions/${plain.id}/stream`, { authorization: `Bearer ${plain.token}` });
    expect([streamRefused.status, streamRefused.errorBody?.code]).toEqual([410, 'CURSOR_EXPIRED']);
    streamRefused.close();

    // `earliest` moves the committed cursor to the floor, for a stream as for a pull.
    const stream = await openSse(`${server.base}/subscriptions/${lenient.id}/stream`, { authorization: `Bearer ${lenient.token}` });
    try {
      expect(stream.status).toBe(200);
      const [first] = await stream.waitFor(1);
      expect(first!.id).toBe('4');
    } finally {
      stream.close();
    }
    const after = await call(server.base, 'GET', `/subscriptions/${lenient.id}/pull?limit=1`, { token: lenient.token });
    expect([after.status, after.body.cursor]).toEqual([200, 4]);
  });

  it('takes the base protocol\'s filter object on a pull, alone or beside other filter keys', async () => {
    const m = await createMonitor(server.base, { types: ['app.a', 'app.b'] });
    await publish(server.base, m.id, m.ownerToken, { type: 'app.a', subject: 'one' });
    await publish(server.base, m.id, m.ownerToken, { type: 'app.b', subject: 'two' });
    await publish(server.base, m.id, m.ownerToken, { type: 'app.b', subject: 'three' });
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: fresh('filtered') }, m.ownerToken);
    const pulled = await rpc('feeds/pull', { subscription: sub.id, filter: { types: ['app.b'] } }, sub.token);
    expect(pulled.result.observations.map((o: { subject: string }) => o.subject)).toEqual(['two', 'three']);
    const both = await rpc('feeds/pull', { subscription: sub.id, filter: { types: ['app.b'] }, subjects: 'three' }, sub.token);
    expect(both.result.observations.map((o: { subject: string }) => o.subject)).toEqual(['three']);
    const twice = await rpc('feeds/pull', { subscription: sub.id, filter: { types: ['app.b'] }, types: 'app.a' }, sub.token);
    expect(twice.error?.data).toMatchObject({ code: 'INVALID_FILTER', invalid: ['types'] });
    const unknown = await rpc('feeds/pull', { subscription: sub.id, filter: { colour: 'red' } }, sub.token);
    expect(unknown.error?.data.code).toBe('INVALID_FILTER');
    const asText = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?filter=types`, { token: sub.token });
    expect([asText.status, asText.body.code, asText.body.field]).toEqual([400, 'INVALID', 'filter']);
  });

  it('keeps a lease note in the lease observations of claim, renew and complete', async () => {
    const m = await createMonitor(server.base, { capabilities: ['observe', 'act'], types: ['job.ready'] });
    await publish(server.base, m.id, m.ownerToken, { type: 'job.ready', subject: 'job-1' });
    const sub = await subscribe(server.base, { monitor: m.id, subscriber: fresh('worker'), capabilities: ['observe', 'act'] }, m.ownerToken);
    const lease = (action: string, body: Record<string, unknown>) =>
      call(server.base, 'POST', `/subscriptions/${sub.id}/leases/${action}`, { token: sub.token, body: { subject: 'job-1', ...body } });
    expect((await lease('claim', { note: 'taking it' })).status).toBe(201);
    expect((await lease('renew', { note: 'still at it' })).status).toBe(200);
    expect((await lease('complete', { outcome: 'done', note: 'merged' })).status).toBe(200);
    const refused = await lease('claim', { note: 7 });
    expect([refused.status, refused.body.field]).toEqual([400, 'note']);
    const notes = (await readFeed(server.base, m.id, m.ownerToken))
      .filter((o) => o.type === vigilType('lease'))
      .map((o) => [o.data.payload.action, o.data.payload.note]);
    expect(notes).toEqual([
      ['claim', 'taking it'],
      ['renew', 'still at it'],
      ['complete', 'merged'],
    ]);
  });
});
