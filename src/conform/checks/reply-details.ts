// §17 reply details other clients rely on: relist/requested on 410, 404
// {retired, cursor} for a retired subscription's token, 201 on re-subscribe,
// `idempotent` on claim, ok/seq/dead_letter on lease replies and retire,
// whole-second ages.
import { check, CheckSkipped } from '../check.ts';
import { accepted, ensure, equal, excerpt, refused } from '../expect.ts';
import { createMonitor, publish, subscribe } from '../fixtures.ts';

const isSeq = (value: unknown) => Number.isSafeInteger(value) && (value as number) > 0;

export const replyDetailChecks = [
  check('§17', 'MP-17-expired-relist', '410 CURSOR_EXPIRED carries relist "monitors/state?id=<monitor>" and the requested cursor', async (ctx) => {
    if (!ctx.adminToken) throw new CheckSkipped('no admin token (use --self or --admin-token)');
    const m = await createMonitor(ctx);
    const s = await subscribe(ctx, m);
    const seqs = [];
    for (const subject of ['a', 'b', 'c']) seqs.push(await publish(ctx, m, { type: 'conform.event', subject }));
    accepted(await ctx.http.post('/admin/compact', { monitor: m.id, upto_seq: seqs[1] }, ctx.adminToken), 200, 'compact');
    const body = refused(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: s.token, query: { cursor: 1 } }), 410, 'CURSOR_EXPIRED', 'replay from cursor 1');
    equal([body.relist, body.requested], [`monitors/state?id=${m.id}`, 1], 'relist and requested');
  }),

  check('§17', 'MP-17-retired-token', 'a retired subscription token is 404 NOT_FOUND {retired: true, cursor} on pull, stream, ack, seek and leases', async (ctx) => {
    const m = await createMonitor(ctx, { capabilities: ['observe', 'act'] });
    const seq = await publish(ctx, m, { type: 'conform.event', subject: 'job' });
    const s = await subscribe(ctx, m, { capabilities: ['act'] });
    accepted(await ctx.http.post(`/subscriptions/${s.id}/ack`, { cursor: seq }, s.token), 200, 'ack');
    accepted(await ctx.http.post(`/subscriptions/${s.id}/retire`, { reason: 'conform' }, s.token), 200, 'retire');
    const calls = {
      pull: ctx.http.get(`/subscriptions/${s.id}/pull`, { token: s.token }),
      stream: ctx.http.get(`/subscriptions/${s.id}/stream`, { token: s.token }),
      ack: ctx.http.post(`/subscriptions/${s.id}/ack`, { cursor: seq }, s.token),
      seek: ctx.http.post(`/subscriptions/${s.id}/seek`, { cursor: 1, reason: 'conform' }, s.token),
      claim: ctx.http.post(`/subscriptions/${s.id}/leases/claim`, { subject: 'job' }, s.token),
    };
    for (const [what, reply] of Object.entries(calls)) {
      const body = refused(await reply, 404, 'NOT_FOUND', `${what} with a retired subscription's token`);
      equal([body.retired, body.cursor], [true, seq], `${what}: retired and cursor`);
    }
  }),

  check('§17', 'MP-17-resubscribe-201', 'subscribing again (re-key, reactivation) answers 201 like every subscribe', async (ctx) => {
    const m = await createMonitor(ctx);
    const s = await subscribe(ctx, m);
    const subscriber = s.subscription.subscriber;
    const again = accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber }, s.token), 201, 're-subscribe with the own token');
    equal(again.subscription?.id, s.id, 'the id after re-subscribing');
    accepted(await ctx.http.post(`/subscriptions/${s.id}/retire`, { reason: 'conform' }, again.token), 200, 'retire');
    const back = accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber }, m.token), 201, 're-subscribe of a retired subscription');
    equal(back.subscription?.active, true, 'active after reactivation');
  }),

  check('§17', 'MP-17-own-token-narrows', 'a subscription\'s own token may keep or narrow its capabilities, never widen them (403 CAPABILITY_MISSING)', async (ctx) => {
    const m = await createMonitor(ctx, { visibility: 'public', capabilities: ['observe', 'act'] });
    const s = await subscribe(ctx, m, { capabilities: ['observe'] }, undefined);
    const subscriber = s.subscription.subscriber;
    refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber, capabilities: ['observe', 'act'] }, s.token), 403, 'CAPABILITY_MISSING', 'widening with the own token');
    accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber, capabilities: ['observe'] }, s.token), 201, 'keeping with the own token');
  }),

  check('§17', 'MP-17-lease-replies', 'claim says idempotent; complete is {ok, seq, lease}; release and reject are {ok, seq, dead_letter, lease}', async (ctx) => {
    const m = await createMonitor(ctx, { capabilities: ['observe', 'act'] });
    for (const subject of ['a', 'b', 'c']) await publish(ctx, m, { type: 'conform.event', subject });
    const s = await subscribe(ctx, m, { capabilities: ['act'] });
    const lease = (action: string, body: Record<string, unknown>) => ctx.http.post(`/subscriptions/${s.id}/leases/${action}`, body, s.token);
    equal(accepted(await lease('claim', { subject: 'a' }), 201, 'claim').idempotent, false, 'idempotent on a new claim');
    equal(accepted(await lease('claim', { subject: 'a' }), 200, 'claim again').idempotent, true, 'idempotent on a repeated claim');
    const complete = accepted(await lease('complete', { subject: 'a' }), 200, 'complete');
    ensure(complete.ok === true && isSeq(complete.seq) && complete.lease?.subject === 'a', `complete reply is not {ok: true, seq, lease}: ${excerpt(complete)}`);
    await lease('claim', { subject: 'b' });
    const release = accepted(await lease('release', { subject: 'b' }), 200, 'release');
    ensure(release.ok === true && isSeq(release.seq) && release.dead_letter === false && release.lease?.dead_letter === false, `release reply is not {ok: true, seq, dead_letter: false, lease}: ${excerpt(release)}`);
    await lease('claim', { subject: 'c' });
    const reject = accepted(await lease('reject', { subject: 'c' }), 200, 'reject');
    ensure(reject.ok === true && isSeq(reject.seq) && reject.dead_letter === false, `reject reply is not {ok: true, seq, dead_letter, lease}: ${excerpt(reject)}`);
  }),

  check('§17', 'MP-17-retire-reply', 'retire answers {ok: true, subscription, seq, cursor_kept}', async (ctx) => {
    const m = await createMonitor(ctx);
    const seq = await publish(ctx, m, { type: 'conform.event' });
    const s = await subscribe(ctx, m);
    accepted(await ctx.http.post(`/subscriptions/${s.id}/ack`, { cursor: seq }, s.token), 200, 'ack');
    const body = accepted(await ctx.http.post(`/subscriptions/${s.id}/retire`, { reason: 'conform' }, s.token), 200, 'retire');
    ensure(body.ok === true && body.subscription?.id === s.id && isSeq(body.seq), `retire reply is not {ok: true, subscription, seq}: ${excerpt(body)}`);
    equal(body.cursor_kept, seq, 'cursor_kept');
  }),

  check('§17', 'MP-17-whole-second-ages', 'state ages are whole seconds or null', async (ctx) => {
    const m = await createMonitor(ctx);
    await publish(ctx, m, { type: 'conform.event' });
    await new Promise((done) => setTimeout(done, 1100));
    const state = accepted(await ctx.http.get(`/monitors/${m.id}/state`, { token: m.token }), 200, 'state');
    for (const [name, age] of Object.entries(state.ages ?? {})) {
      ensure(age === null || Number.isSafeInteger(age), `ages.${name} is ${excerpt(age)}, not whole seconds or null`);
    }
    ensure((state.ages?.since_last_observation_s ?? 0) >= 1, `since_last_observation_s is ${excerpt(state.ages?.since_last_observation_s)} after 1.1 s`);
  }),
];
