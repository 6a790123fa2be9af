// §9 subscriptions and the cursor: subscribe, pull, ack, seek, renew, retire.
import { type CheckContext, check } from '../check.ts';
import { accepted, ensure, equal, excerpt, hasKeys, refused, sleep } from '../expect.ts';
import { createMonitor, expectSystemActor, publish, pull, readFeed, subscribe, vendorType } from '../fixtures.ts';
import type { Wire } from '../wire-client.ts';

const subscriptionFields = ['id', 'monitor', 'subscriber', 'capabilities', 'cursor', 'protocol', 'active', 'filter', 'reset_policy', 'retire_after_mute_seconds', 'created', 'last_pull', 'lag'];
const ack = (ctx: CheckContext, s: { id: string; token: string }, cursor: unknown) => ctx.http.post(`/subscriptions/${s.id}/ack`, { cursor }, s.token);

export const subscriptionChecks = [
  check('§9', 'MP-9-subscribe', 'subscribe returns 201 {subscription, token} in the §9 shape and writes subscribed', async (ctx) => {
    const m = await createMonitor(ctx);
    const reply = accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: 'agent:conform' }, m.token), 201, 'subscribe');
    hasKeys(reply.subscription, subscriptionFields, 'subscription');
    ensure(typeof reply.token === 'string' && reply.token.length > 0, 'no token in the reply');
    // The base specification's default reset_policy is none: below the retention floor the subscriber must relist.
    equal([reply.subscription.active, reply.subscription.protocol, reply.subscription.reset_policy], [true, 'pull', 'none'], 'active, protocol, reset_policy defaults');
    ensure([0, 1].includes(reply.subscription.cursor), `from "earliest" should start at cursor 0 or 1 (floor 0), got ${reply.subscription.cursor}`);
    ensure((await readFeed(ctx, m)).some((o) => o.type === vendorType(ctx, 'subscribed')), 'no subscribed observation in the feed');
    refused(await ctx.http.post('/subscriptions', { monitor: m.id }, m.token), 400, 'INVALID', 'subscribe without subscriber');
    refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: 'agent:x', protocol: 'carrier-pigeon' }, m.token), 400, 'UNKNOWN_VOCABULARY', 'subscribe with protocol carrier-pigeon');
  }),

  check('§9', 'MP-9-private-subscribe', 'subscribing to a private monitor without its token is 404', async (ctx) => {
    const m = await createMonitor(ctx);
    refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: 'agent:stranger' }), 404, 'NOT_FOUND', 'subscribe without a token');
    accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: 'agent:stranger' }, m.token), 201, 'subscribe with the owner token');
  }),

  check('§9', 'MP-9-capability-grant', 'a stranger gets only default_grant; more is 403 CAPABILITY_MISSING', async (ctx) => {
    const m = await createMonitor(ctx, { visibility: 'public', capabilities: ['observe', 'react', 'act'] });
    const body = refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:x'), capabilities: ['observe', 'act'] }), 403, 'CAPABILITY_MISSING', 'a stranger asks for act');
    ensure(Array.isArray(body.granted) && Array.isArray(body.monitor_capabilities), `reply lacks granted/monitor_capabilities: ${excerpt(body)}`);
    accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:x'), capabilities: ['observe'] }), 201, 'a stranger asks for observe');
    const owner = accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:x'), capabilities: ['observe', 'act'] }, m.token), 201, 'the owner asks for act');
    equal([...owner.subscription.capabilities].sort(), ['act', 'observe'], 'capabilities granted to the owner');
    refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:x'), capabilities: ['act'] }, (await createMonitor(ctx)).token), 403, 'CAPABILITY_MISSING', 'another monitor\'s owner token asks for act');
  }),

  check('§3', 'MP-3-subscribe-token', 'a shared monitor\'s subscribe token lets others see it and subscribe with any capability', async (ctx) => {
    const m = await createMonitor(ctx, { visibility: 'shared', subscribe_token: true, capabilities: ['observe', 'act'] });
    refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:x') }), 404, 'NOT_FOUND', 'subscribe to a shared monitor without a token');
    const granted = accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:x'), capabilities: ['observe', 'act'] }, m.subscribeToken), 201, 'subscribe with the subscribe token asking for act');
    equal([...granted.subscription.capabilities].sort(), ['act', 'observe'], 'capabilities granted with the subscribe token');
  }),

  check('§9', 'MP-9-resubscribe', 're-subscribing re-keys the subscription, keeps the cursor, needs a token', async (ctx) => {
    const m = await createMonitor(ctx, { visibility: 'public' });
    const s = await subscribe(ctx, m, { subscriber: 'agent:again' }, undefined);
    const page = await pull(ctx, s);
    accepted(await ack(ctx, s, page.next), 200, 'ack');
    refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: 'agent:again' }), 401, 'UNAUTHORIZED', 're-subscribe without a token');
    const again = accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: 'agent:again' }, s.token), [200, 201], 're-subscribe with the old token');
    equal([again.subscription.id, again.subscription.cursor], [s.id, page.next], 'id and cursor after re-subscribe');
    ensure(again.token !== s.token, 'the token was not changed');
    accepted(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: again.token }), 200, 'pull with the new token');
  }),

  check('§9', 'MP-9-pull-token', 'pull needs the subscription token (401 UNAUTHORIZED)', async (ctx) => {
    const m = await createMonitor(ctx);
    const s = await subscribe(ctx, m);
    refused(await ctx.http.get(`/subscriptions/${s.id}/pull`), 401, 'UNAUTHORIZED', 'pull without a token');
    refused(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: `${s.token}x` }), 401, 'UNAUTHORIZED', 'pull with a wrong token');
    refused(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: m.token }), 401, 'UNAUTHORIZED', 'pull with the owner token');
    accepted(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: s.token }), 200, 'pull with the subscription token');
  }),

  check('§9', 'MP-9-pull-shape', 'a pull page is {subscription, monitor, cursor, head, lag, retention_floor, next, redelivered, observations}', async (ctx) => {
    const m = await createMonitor(ctx);
    await publish(ctx, m, { type: 'conform.event' });
    const page = await pull(ctx, await subscribe(ctx, m));
    hasKeys(page, ['subscription', 'monitor', 'cursor', 'head', 'lag', 'retention_floor', 'next', 'redelivered', 'observations'], 'pull page');
    const last = page.observations.at(-1);
    equal(page.next, Number(last?.id) + 1, 'next after a full page');
  }),

  check('§9', 'MP-9-pull-keeps-cursor', 'a pull never moves the cursor; re-pulled observations are redelivered', async (ctx) => {
    const m = await createMonitor(ctx);
    await publish(ctx, m, { type: 'conform.event' });
    const s = await subscribe(ctx, m, { filter: { types: 'conform.event' } });
    const first = await pull(ctx, s);
    const second = await pull(ctx, s);
    equal(second.observations.map((o: Wire) => o.id), first.observations.map((o: Wire) => o.id), 'ids of the second pull');
    equal([first.cursor, second.cursor], [s.subscription.cursor, s.subscription.cursor], 'cursor in both pages');
    ensure(first.observations.every((o: Wire) => !o.redelivered), 'first delivery marked redelivered');
    ensure(second.observations.length > 0 && second.observations.every((o: Wire) => o.redelivered === true), 'second delivery not marked redelivered: true');
  }),

  check('§9', 'MP-9-ack', 'ack commits the cursor; later pulls start there', async (ctx) => {
    const m = await createMonitor(ctx);
    await publish(ctx, m, { type: 'conform.event', subject: 'one' });
    const s = await subscribe(ctx, m, { filter: { types: 'conform.event' } });
    const page = await pull(ctx, s);
    accepted(await ack(ctx, s, page.next), 200, 'ack next');
    await publish(ctx, m, { type: 'conform.event', subject: 'two' });
    const after = await pull(ctx, s);
    equal([after.cursor, after.observations.map((o: Wire) => o.subject)], [page.next, ['two']], 'cursor and subjects after ack');
    accepted(await ack(ctx, s, page.next), 200, 'ack of the same cursor (no change)');
  }),

  check('§9', 'MP-9-ack-bounds', 'ack below the cursor is 409 CURSOR_BACKWARDS, above head + 1 is 400 INVALID', async (ctx) => {
    const m = await createMonitor(ctx);
    await publish(ctx, m, { type: 'conform.event' });
    const s = await subscribe(ctx, m);
    const page = await pull(ctx, s);
    accepted(await ack(ctx, s, page.next), 200, `ack ${page.next}`);
    refused(await ack(ctx, s, page.next - 1), 409, 'CURSOR_BACKWARDS', `ack ${page.next - 1} below the stored cursor`);
    const head = (await pull(ctx, s)).head;
    refused(await ack(ctx, s, head + 2), 400, 'INVALID', `ack ${head + 2} above head + 1`);
    accepted(await ack(ctx, s, head + 1), 200, `ack ${head + 1} (head + 1)`);
  }),

  check('§0', 'MP-0-integer-forms', 'integers are safe non-negative numbers or 1–15 digit strings; anything else is 400 INVALID', async (ctx) => {
    const m = await createMonitor(ctx);
    const s = await subscribe(ctx, m);
    for (const bad of [-1, 1.5, 'abc', '', '1234567890123456', true, null]) {
      const body = refused(await ack(ctx, s, bad), 400, 'INVALID', `ack {cursor: ${JSON.stringify(bad)}}`);
      ensure(JSON.stringify(body).includes('cursor'), `the refusal does not name the field cursor: ${excerpt(body)}`);
    }
    refused(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: s.token, query: { cursor: 'x1' } }), 400, 'INVALID', 'pull ?cursor=x1');
    accepted(await ack(ctx, s, '1'), 200, 'ack {cursor: "1"}');
    accepted(await ack(ctx, s, 1), 200, 'ack {cursor: 1}');
  }),

  check('§9', 'MP-9-pull-params', 'wait 0–50 and limit 1–1000 are validated (400 INVALID)', async (ctx) => {
    const m = await createMonitor(ctx);
    const s = await subscribe(ctx, m);
    for (const query of [{ wait: 51 }, { wait: -1 }, { limit: 0 }, { limit: 1001 }, { limit: 'lots' }] as Record<string, string | number>[]) {
      refused(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: s.token, query }), 400, 'INVALID', `pull ?${new URLSearchParams(query as Wire)}`);
    }
    accepted(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: s.token, query: { wait: 0, limit: 1000 } }), 200, 'pull ?wait=0&limit=1000');
    accepted(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: s.token, query: { limit: 1 } }), 200, 'pull ?limit=1');
  }),

  check('§9', 'MP-9-limit-next-lag', 'limit cuts the page, next follows it, lag counts matching observations exactly', async (ctx) => {
    const m = await createMonitor(ctx);
    for (let i = 0; i < 5; i++) await publish(ctx, m, { type: i % 2 ? 'conform.other' : 'conform.event', subject: `s${i}` });
    const s = await subscribe(ctx, m, { filter: { types: 'conform.event' } });
    const page = await pull(ctx, s, { limit: 2 });
    equal(page.observations.map((o: Wire) => o.subject), ['s0', 's2'], 'subjects of a page with limit 2');
    equal(page.next, Number(page.observations[1].id) + 1, 'next');
    equal(page.lag, 3, 'lag (three matching observations after the committed cursor)');
    accepted(await ack(ctx, s, page.next), 200, 'ack');
    const rest = await pull(ctx, s);
    equal([rest.lag, rest.observations.map((o: Wire) => o.subject)], [1, ['s4']], 'lag and subjects after ack');
    accepted(await ack(ctx, s, rest.next), 200, 'ack');
    const empty = await pull(ctx, s);
    equal([empty.lag, empty.observations.length], [0, 0], 'lag and page size at the end');
    ensure(empty.next >= rest.next && empty.next <= empty.head + 1, `next ${empty.next} on an empty page is outside [${rest.next}, head + 1]`);
    await publish(ctx, m, { type: 'conform.event', subject: 's5' });
    accepted(await ack(ctx, s, empty.next), 200, 'ack the empty page\'s next');
    equal((await pull(ctx, s)).observations.map((o: Wire) => o.subject), ['s5'], 'the next observation is not skipped');
  }),

  check('§9', 'MP-9-from-head', 'from "head" starts after the current head; an integer from starts there', async (ctx) => {
    const m = await createMonitor(ctx);
    await publish(ctx, m, { type: 'conform.event', subject: 'old' });
    const s = await subscribe(ctx, m, { from: 'head', filter: { types: 'conform.event' } });
    await publish(ctx, m, { type: 'conform.event', subject: 'new' });
    equal((await pull(ctx, s)).observations.map((o: Wire) => o.subject), ['new'], 'subjects after from "head"');
    const t = await subscribe(ctx, m, { from: 2, filter: { types: 'conform.event' } });
    equal((await pull(ctx, t)).observations.map((o: Wire) => o.subject), ['old', 'new'], 'subjects after from 2');
  }),

  check('§9', 'MP-9-replay-cursor', 'pull ?cursor= replays from there without moving the stored cursor', async (ctx) => {
    const m = await createMonitor(ctx);
    for (const subject of ['a', 'b', 'c']) await publish(ctx, m, { type: 'conform.event', subject });
    const s = await subscribe(ctx, m, { filter: { types: 'conform.event' } });
    const all = await pull(ctx, s);
    accepted(await ack(ctx, s, all.next), 200, 'ack everything');
    const replay = await pull(ctx, s, { cursor: all.observations[1].id });
    equal(replay.observations.map((o: Wire) => o.subject), ['b', 'c'], 'replay from the second observation');
    equal((await pull(ctx, s)).observations.length, 0, 'a plain pull after the replay still starts at the committed cursor');
  }),

  check('§9', 'MP-9-long-poll', 'a waiting pull returns as soon as a matching observation is written', async (ctx) => {
    const m = await createMonitor(ctx);
    const s = await subscribe(ctx, m, { from: 'head', filter: { types: 'conform.event' } });
    const started = Date.now();
    const waiting = pull(ctx, s, { wait: 10 });
    await sleep(300);
    await publish(ctx, m, { type: 'conform.event', subject: 'ping' });
    const page = await waiting;
    const took = Date.now() - started;
    equal(page.observations.map((o: Wire) => o.subject), ['ping'], 'observations of the waiting pull');
    ensure(took < 2000, `the waiting pull took ${took} ms after a publish at 300 ms`);
  }),

  check('§9', 'MP-9-seek', 'seek moves the cursor either way with a reason and writes subscribed', async (ctx) => {
    const m = await createMonitor(ctx);
    await publish(ctx, m, { type: 'conform.event' });
    const s = await subscribe(ctx, m);
    const page = await pull(ctx, s);
    accepted(await ack(ctx, s, page.next), 200, 'ack');
    refused(await ctx.http.post(`/subscriptions/${s.id}/seek`, { cursor: 1 }, s.token), 400, 'INVALID', 'seek without a reason');
    accepted(await ctx.http.post(`/subscriptions/${s.id}/seek`, { cursor: 1, reason: 'replay' }, s.token), 200, 'seek back to 1 with a reason');
    const after = await pull(ctx, s);
    equal(after.cursor, 1, 'cursor after seek');
    ensure(after.observations.some((o: Wire) => o.type === vendorType(ctx, 'subscribed') && Number(o.id) > page.next - 1), 'no subscribed observation written by seek');
  }),

  check('§9', 'MP-9-renew', 'renew returns a new token and voids the old one at once', async (ctx) => {
    const m = await createMonitor(ctx);
    const s = await subscribe(ctx, m);
    refused(await ctx.http.post(`/subscriptions/${s.id}/renew`, {}), 401, 'UNAUTHORIZED', 'renew without a token');
    const renewed = accepted(await ctx.http.post(`/subscriptions/${s.id}/renew`, {}, s.token), 200, 'renew');
    ensure(typeof renewed.token === 'string' && renewed.token !== s.token, `renew did not return a new token: ${excerpt(renewed)}`);
    refused(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: s.token }), 401, 'UNAUTHORIZED', 'pull with the old token');
    accepted(await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: renewed.token }), 200, 'pull with the new token');
  }),

  check('§9', 'MP-9-retire', 'retire keeps the cursor, writes subscription_retired; re-subscribe reactivates', async (ctx) => {
    const m = await createMonitor(ctx);
    await publish(ctx, m, { type: 'conform.event' });
    const s = await subscribe(ctx, m, { subscriber: 'agent:retiree' });
    const page = await pull(ctx, s);
    accepted(await ack(ctx, s, page.next), 200, 'ack');
    const retired = accepted(await ctx.http.post(`/subscriptions/${s.id}/retire`, {}, s.token), 200, 'retire');
    equal([retired.subscription?.active, retired.subscription?.cursor], [false, page.next], 'active and cursor after retire');
    const feed = await readFeed(ctx, m);
    ensure(feed.some((o) => o.type === vendorType(ctx, 'subscription_retired')), 'no subscription_retired observation');
    const again = accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: 'agent:retiree' }, m.token), [200, 201], 're-subscribe with the owner token');
    equal([again.subscription.id, again.subscription.active, again.subscription.cursor], [s.id, true, page.next], 'id, active, cursor after re-subscribe');
  }),

  check('§9', 'MP-9-mute-retirement', 'a subscription silent for its mute period is retired on time with reason "mute"', async (ctx) => {
    const m = await createMonitor(ctx);
    const watcher = await subscribe(ctx, m, { filter: { types: vendorType(ctx, 'subscription_retired') } });
    const quiet = await subscribe(ctx, m, { retire_after_mute_seconds: 1 });
    const page = await pull(ctx, watcher, { wait: 5 });
    const retired = page.observations.find((o: Wire) => o.type === vendorType(ctx, 'subscription_retired'));
    ensure(retired, 'no subscription_retired within 5 s of a 1 s mute period');
    ensure(JSON.stringify(retired.data).includes(quiet.id), `the retirement does not name ${quiet.id}: ${excerpt(retired.data)}`);
    equal(retired.data?.payload?.reason, 'mute', 'payload.reason');
    expectSystemActor(ctx, retired.actor, 'actor of the retirement');
    const live = await pull(ctx, watcher);
    ensure(live.observations.length >= 1, 'the watcher (pulling) was retired too');
  }, 12_000),
];
