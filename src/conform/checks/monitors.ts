// §3 monitors: create, read, list and visibility.
import { check } from '../check.ts';
import { accepted, ensure, equal, excerpt, hasKeys, refused } from '../expect.ts';
import { createMonitor, publish, readFeed, subscribe, vendorType } from '../fixtures.ts';
import type { Wire } from '../wire-client.ts';

const servedMonitorFields = ['id', 'name', 'owner', 'source', 'filter', 'horizon', 'capabilities', 'visibility', 'attested', 'default_grant', 'version', 'created', 'updated', 'active', 'head', 'description', 'types', 'ttl_seconds', 'retire_after_mute_seconds', 'status', 'retention_floor', 'limits'];

export const monitorChecks = [
  check('§3', 'MP-3-create-defaults', 'create with an empty body applies the §3 defaults and returns the owner token once', async (ctx) => {
    const body = accepted(await ctx.http.post('/monitors', {}), 201, 'create with {}');
    const m = body.monitor;
    ensure(/^mon-[0-9a-f]{8}$/.test(m?.id), `default id should be mon- + 8 hex, got ${excerpt(m?.id)}`);
    ensure(typeof body.owner_token === 'string' && body.owner_token.length > 0, 'no owner_token in the reply');
    equal(
      [m.name, m.visibility, m.horizon, m.capabilities, m.default_grant, m.source, m.types, m.filter, m.version, m.status, m.active],
      [m.id, 'private', 'event', ['observe'], ['observe'], { kind: 'log' }, [], {}, 1, 'active', true],
      'name, visibility, horizon, capabilities, default_grant, source, types, filter, version, status, active',
    );
    const again = accepted(await ctx.http.get(`/monitors/${m.id}`, { token: body.owner_token }), 200, 'GET with the owner token');
    ensure(!('owner_token' in again), 'GET shows the owner token again');
    equal([m.head, again.head], [1, 1], 'head in the create reply and on GET (the configured observation is seq 1)');
  }),

  check('§3', 'MP-3-id-pattern', 'an id outside ^[A-Za-z0-9_.-]{2,64}$ is 400 INVALID', async (ctx) => {
    refused(await ctx.http.post('/monitors', { id: 'x' }), 400, 'INVALID', 'id "x" (too short)');
    refused(await ctx.http.post('/monitors', { id: 'has space' }), 400, 'INVALID', 'id "has space"');
    refused(await ctx.http.post('/monitors', { id: 'a'.repeat(65) }), 400, 'INVALID', 'a 65-character id');
    accepted(await ctx.http.post('/monitors', { id: `${ctx.unique('Ok_id')}.x` }), 201, 'a valid id');
  }),

  check('§3', 'MP-3-duplicate-id', 'creating a second monitor with a taken id is 409 DUPLICATE', async (ctx) => {
    const id = ctx.unique('dup');
    accepted(await ctx.http.post('/monitors', { id }), 201, 'first create');
    refused(await ctx.http.post('/monitors', { id }), 409, 'DUPLICATE', 'second create with the same id');
  }),

  check('§3', 'MP-3-vocabulary-together', 'all vocabulary errors of a create are reported together', async (ctx) => {
    const id = ctx.unique('voc');
    const body = refused(
      await ctx.http.post('/monitors', { id, horizon: 'fortnight', visibility: 'secret', source: { kind: 'pigeon' }, capabilities: ['observe', 'dance'] }),
      400,
      'UNKNOWN_VOCABULARY',
      'create with four bad closed values',
    );
    const invalid: string[] = body.invalid ?? [];
    for (const value of ['fortnight', 'secret', 'pigeon', 'dance']) ensure(invalid.some((i) => String(i).includes(value)), `invalid lacks ${value}: ${excerpt(invalid)}`);
    ensure(body.known && typeof body.known === 'object', 'no known vocabularies in the reply');
    refused(await ctx.http.get(`/monitors/${id}`), 404, 'NOT_FOUND', 'GET after the refused create (nothing stored)');
    accepted(await ctx.http.post('/monitors', { id, horizon: 'week', visibility: 'shared', source: { kind: 'log' }, capabilities: ['observe', 'act'] }), 201, 'create with valid values');
  }),

  check('§3', 'MP-3-source-label', 'a source of any kind without its run field is a label: created without a token, returned as given', async (ctx) => {
    for (const kind of ['shell', 'http', 'file', 'ws', 'feed', 'cir', 'formula', 'log']) {
      const source = { kind, ref: 'conformance' };
      const m = await createMonitor(ctx, { source });
      equal(m.monitor?.source, source, `source of a ${kind} label as created`);
      equal(accepted(await ctx.http.get(`/monitors/${m.id}`, { token: m.token }), 200, `GET the ${kind} label's monitor`).source, source, `source of a ${kind} label as read`);
    }
  }),

  check('§3', 'MP-3-served-fields', 'a served monitor has every §3 field; head is the highest seq', async (ctx) => {
    const m = await createMonitor(ctx, { visibility: 'public' });
    const seq = await publish(ctx, m, { type: 'conform.event' });
    const body = accepted(await ctx.http.get(`/monitors/${m.id}`), 200, 'GET a public monitor');
    hasKeys(body, servedMonitorFields, 'monitor');
    equal(body.head, seq, 'head after a publish');
    equal(body.retention_floor, 0, 'retention_floor of a monitor never compacted');
  }),

  check('§3', 'MP-3-create-configured', 'create writes a configured observation with action "create"', async (ctx) => {
    const m = await createMonitor(ctx, { reason: 'conformance' });
    const feed = await readFeed(ctx, m);
    const first = feed[0];
    equal([first?.type, first?.data?.payload?.action], [vendorType(ctx, 'configured'), 'create'], 'first observation type and action');
  }),

  check('§3', 'MP-3-private-visibility', 'a private monitor is 404 (never 401) without its owner token', async (ctx) => {
    const m = await createMonitor(ctx);
    refused(await ctx.http.get(`/monitors/${m.id}`), 404, 'NOT_FOUND', 'GET without a token');
    refused(await ctx.http.get(`/monitors/${m.id}`, { token: 'vgo_wrong' }), 404, 'NOT_FOUND', 'GET with a wrong token');
    refused(await ctx.http.get(`/monitors/${m.id}/state`), 404, 'NOT_FOUND', 'GET state without a token');
    accepted(await ctx.http.get(`/monitors/${m.id}`, { token: m.token }), 200, 'GET with the owner token');
    const anonymous = accepted(await ctx.http.get('/monitors'), 200, 'list without a token');
    ensure(!anonymous.monitors.some((x: Wire) => x.id === m.id), 'the anonymous list shows a private monitor');
    const owner = accepted(await ctx.http.get('/monitors', { token: m.token }), 200, 'list with the owner token');
    ensure(owner.monitors.some((x: Wire) => x.id === m.id), 'the owner list lacks the private monitor');
  }),

  check('§3', 'MP-3-shared-visibility', 'a shared monitor is visible with the owner or subscribe token only', async (ctx) => {
    const m = await createMonitor(ctx, { visibility: 'shared', subscribe_token: true });
    ensure(typeof m.subscribeToken === 'string', 'create with subscribe_token: true returned no subscribe_token');
    refused(await ctx.http.get(`/monitors/${m.id}`), 404, 'NOT_FOUND', 'GET without a token');
    accepted(await ctx.http.get(`/monitors/${m.id}`, { token: m.subscribeToken }), 200, 'GET with the subscribe token');
    accepted(await ctx.http.get(`/monitors/${m.id}`, { token: m.token }), 200, 'GET with the owner token');
  }),

  check('§3', 'MP-3-public-visibility', 'a public monitor is readable and listed for anyone', async (ctx) => {
    const m = await createMonitor(ctx, { visibility: 'public' });
    accepted(await ctx.http.get(`/monitors/${m.id}`), 200, 'GET without a token');
    accepted(await ctx.http.get(`/monitors/${m.id}/state`), 200, 'GET state without a token');
    const list = accepted(await ctx.http.get('/monitors'), 200, 'list without a token');
    ensure(list.monitors.some((x: Wire) => x.id === m.id), 'the anonymous list lacks the public monitor');
  }),

  check('§3', 'MP-3-subscription-token-no-widen', 'a subscription token does not widen a private monitor', async (ctx) => {
    const m = await createMonitor(ctx);
    const s = await subscribe(ctx, m);
    refused(await ctx.http.get(`/monitors/${m.id}`, { token: s.token }), 404, 'NOT_FOUND', 'GET a private monitor with a subscription token');
    accepted(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: s.token }), 200, 'pull with that subscription token');
  }),
];
