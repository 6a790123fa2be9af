// §3 configure: update, pause, resume, retire with a reason and the owner token.
import { check } from '../check.ts';
import { accepted, ensure, equal, excerpt, refused } from '../expect.ts';
import { createMonitor, pull, readFeed, subscribe, vendorType } from '../fixtures.ts';
import type { Wire } from '../wire-client.ts';

export const configureChecks = [
  check('§3', 'MP-3-configure-reason', 'configure needs a non-empty reason (400 INVALID)', async (ctx) => {
    const m = await createMonitor(ctx);
    refused(await ctx.http.post(`/monitors/${m.id}/update`, { patch: { name: 'x' } }, m.token), 400, 'INVALID', 'update without a reason');
    refused(await ctx.http.post(`/monitors/${m.id}/pause`, { reason: '' }, m.token), 400, 'INVALID', 'pause with an empty reason');
    refused(await ctx.http.post(`/monitors/${m.id}/pause`, { reason: 7 }, m.token), 400, 'INVALID', 'pause with a numeric reason');
    const body = accepted(await ctx.http.post(`/monitors/${m.id}/pause`, { reason: 'maintenance' }, m.token), 200, 'pause with a reason');
    ensure(body.monitor && Number.isSafeInteger(body.seq), `reply is not {monitor, seq}: ${excerpt(body)}`);
  }),

  check('§3', 'MP-3-configure-owner', 'configure without the owner token is 401 UNAUTHORIZED', async (ctx) => {
    const m = await createMonitor(ctx, { visibility: 'public' });
    refused(await ctx.http.post(`/monitors/${m.id}/pause`, { reason: 'r' }), 401, 'UNAUTHORIZED', 'pause without a token');
    refused(await ctx.http.post(`/monitors/${m.id}/update`, { reason: 'r', patch: { name: 'n' } }, 'vgo_wrong'), 401, 'UNAUTHORIZED', 'update with a wrong token');
    accepted(await ctx.http.post(`/monitors/${m.id}/update`, { reason: 'r', patch: { name: 'n' } }, m.token), 200, 'update with the owner token');
  }),

  check('§3', 'MP-3-update-diff', 'update bumps version and writes configured {action, reason, diff}', async (ctx) => {
    const m = await createMonitor(ctx, { name: 'before' });
    const body = accepted(await ctx.http.post(`/monitors/${m.id}/update`, { reason: 'rename', patch: { name: 'after', horizon: 'day' } }, m.token), 200, 'update');
    equal([body.monitor?.name, body.monitor?.horizon, body.monitor?.version, body.monitor?.head], ['after', 'day', 2, body.seq], 'name, horizon, version, head after update');
    const observation = (await readFeed(ctx, m)).find((o) => o.type === vendorType(ctx, 'configured') && o.data?.payload?.action === 'update');
    ensure(observation, 'no configured observation with action "update"');
    equal(observation.data.payload.reason, 'rename', 'configured reason');
    equal(observation.data.payload.diff?.name, { before: 'before', after: 'after' }, 'diff.name');
    equal(Number(observation.id), body.seq, 'the reply seq names the configured observation');
  }),

  check('§3', 'MP-3-update-vocabulary', 'update patches are vocabulary-checked (400 UNKNOWN_VOCABULARY)', async (ctx) => {
    const m = await createMonitor(ctx);
    refused(await ctx.http.post(`/monitors/${m.id}/update`, { reason: 'r', patch: { horizon: 'eon' } }, m.token), 400, 'UNKNOWN_VOCABULARY', 'patch horizon "eon"');
    const unchanged = accepted(await ctx.http.get(`/monitors/${m.id}`, { token: m.token }), 200, 'GET');
    equal([unchanged.horizon, unchanged.version], ['event', 1], 'horizon and version after the refused update');
    accepted(await ctx.http.post(`/monitors/${m.id}/update`, { reason: 'r', patch: { horizon: 'month' } }, m.token), 200, 'patch horizon "month"');
  }),

  check('§3', 'MP-3-pause-resume', 'pause refuses publishes (409 UNAVAILABLE, recorded); resume accepts them again', async (ctx) => {
    const m = await createMonitor(ctx);
    const paused = accepted(await ctx.http.post(`/monitors/${m.id}/pause`, { reason: 'p' }, m.token), 200, 'pause');
    equal([paused.monitor?.status, paused.monitor?.active], ['paused', false], 'status, active after pause');
    const again = accepted(await ctx.http.post(`/monitors/${m.id}/pause`, { reason: 'p2' }, m.token), 200, 'pause of a paused monitor (no-op)');
    equal(again.monitor?.status, 'paused', 'status after the second pause');
    const refusal = refused(await ctx.http.post(`/monitors/${m.id}/observations`, { type: 'conform.event' }, m.token), 409, 'UNAVAILABLE', 'publish while paused');
    ensure(Number.isSafeInteger(refusal.rejected_seq), `the refusal carries no rejected_seq: ${excerpt(refusal)}`);
    const resumed = accepted(await ctx.http.post(`/monitors/${m.id}/resume`, { reason: 'r' }, m.token), 200, 'resume');
    equal([resumed.monitor?.status, resumed.monitor?.active], ['active', true], 'status, active after resume');
    accepted(await ctx.http.post(`/monitors/${m.id}/observations`, { type: 'conform.event' }, m.token), 201, 'publish after resume');
  }),

  check('§3', 'MP-3-retire-final', 'retirement is final: resume and publish are 409 UNAVAILABLE', async (ctx) => {
    const m = await createMonitor(ctx);
    const reader = await subscribe(ctx, m);
    const retired = accepted(await ctx.http.post(`/monitors/${m.id}/retire`, { reason: 'done' }, m.token), 200, 'retire');
    equal([retired.monitor?.status, retired.monitor?.active], ['retired', false], 'status, active after retire');
    refused(await ctx.http.post(`/monitors/${m.id}/resume`, { reason: 'again' }, m.token), 409, 'UNAVAILABLE', 'resume of a retired monitor');
    refused(await ctx.http.post(`/monitors/${m.id}/observations`, { type: 'conform.event' }, m.token), 409, 'UNAVAILABLE', 'publish to a retired monitor');
    const actions = (await pull(ctx, reader)).observations.filter((o: Wire) => o.type === vendorType(ctx, 'configured')).map((o: Wire) => o.data?.payload?.action);
    equal(actions, ['create', 'retire'], 'configured actions in the feed');
  }),
];
