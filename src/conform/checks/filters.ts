// §8 filters: stored on subscriptions, inline on pull, and the monitor's own.
import { type CheckContext, check } from '../check.ts';
import { accepted, ensure, equal, excerpt, refused } from '../expect.ts';
import { createMonitor, type MonitorHandle, publish, pull, subscribe } from '../fixtures.ts';
import type { Wire } from '../wire-client.ts';

/** A monitor with four observations: subjects a/b × types event/other, tags env, words in data. */
async function seeded(ctx: CheckContext, extra: Record<string, unknown> = {}): Promise<MonitorHandle> {
  const m = await createMonitor(ctx, extra);
  await publish(ctx, m, { type: 'conform.event', subject: 'a', tags: { env: 'prod' }, data: { note: 'Disk FULL on host' } });
  await publish(ctx, m, { type: 'conform.other', subject: 'a', tags: { env: 'dev' }, actor: 'probe:p1' });
  await publish(ctx, m, { type: 'conform.event', subject: 'b', tags: { env: 'dev' } });
  await publish(ctx, m, { type: 'conform.other', subject: 'b', tags: { env: 'prod' }, tier: 'derived' });
  return m;
}

const picked = (page: Wire) => page.observations.map((o: Wire) => `${o.type.split('.').pop()}/${o.subject}`);

export const filterChecks = [
  check('§8', 'MP-8-and-or', 'filter keys AND together, list values OR together, scalars are one-element lists', async (ctx) => {
    const m = await seeded(ctx);
    const s = await subscribe(ctx, m, { filter: { types: ['conform.event', 'conform.other'], subjects: 'b' } });
    equal(picked(await pull(ctx, s)), ['event/b', 'other/b'], 'observations for types [event, other] AND subjects b');
    const t = await subscribe(ctx, m, { filter: { '#env': 'prod', tiers: ['derived', 'measured'] } });
    equal(picked(await pull(ctx, t)), ['other/b'], 'observations for #env prod AND tiers [derived, measured]');
    const u = await subscribe(ctx, m, { filter: { actors: 'probe:p1' } });
    equal(picked(await pull(ctx, u)), ['other/a'], 'observations for actors probe:p1');
  }),

  check('§8', 'MP-8-provenance-keys', 'origins and sources filter on the observation\'s origin and source', async (ctx) => {
    const m = await seeded(ctx);
    const s = await subscribe(ctx, m, { filter: { origins: 'probe' } });
    equal(picked(await pull(ctx, s)), ['other/a'], 'observations for origins probe');
    // Ambiguous: "sources" may mean the publisher's source_ref or the event's
    // CloudEvents source (monitor:<id>); either reading is accepted.
    await publish(ctx, m, { type: 'conform.event', subject: 'c', source_ref: 'ci:job-7' });
    const byRef = picked(await pull(ctx, await subscribe(ctx, m, { filter: { sources: 'ci:job-7' } })));
    if (JSON.stringify(byRef) === JSON.stringify(['event/c'])) return 'sources matches source_ref (accepted reading)';
    const t = await subscribe(ctx, m, { filter: { sources: `monitor:${m.id}`, types: 'conform.event' } });
    const bySource = picked(await pull(ctx, t));
    equal(bySource, ['event/a', 'event/b', 'event/c'], `sources matches neither source_ref (got ${JSON.stringify(byRef)}) nor the event source`);
    return 'sources matches the CloudEvents source (accepted reading)';
  }),

  check('§8', 'MP-8-type-prefix', 'a types value ending in * matches by prefix', async (ctx) => {
    const m = await seeded(ctx);
    const s = await subscribe(ctx, m, { filter: { types: 'conform.*' } });
    equal(picked(await pull(ctx, s)), ['event/a', 'other/a', 'event/b', 'other/b'], 'observations for conform.*');
  }),

  check('§8', 'MP-8-text', 'text is a case-insensitive substring of data and subject', async (ctx) => {
    const m = await seeded(ctx);
    const s = await subscribe(ctx, m, { filter: { text: 'disk full' } });
    equal(picked(await pull(ctx, s)), ['event/a'], 'observations for text "disk full"');
  }),

  check('§8', 'MP-8-since-until', 'since and until are inclusive timestamps', async (ctx) => {
    const m = await seeded(ctx);
    const all = await pull(ctx, await subscribe(ctx, m, { filter: { types: 'conform.*' } }));
    const third = all.observations[2];
    const s = await subscribe(ctx, m, { filter: { types: 'conform.*', since: third.time, until: third.time } });
    ensure(picked(await pull(ctx, s)).includes('event/b'), `since = until = ${third.time} does not include the observation at that time`);
    refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:s'), filter: { since: 'yesterday' } }, m.token), 400, 'INVALID_FILTER', 'since "yesterday"');
  }),

  check('§8', 'MP-8-unknown-key', 'an unknown filter key is 400 INVALID_FILTER with known_keys', async (ctx) => {
    const m = await createMonitor(ctx);
    const body = refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:s'), filter: { colour: 'red' } }, m.token), 400, 'INVALID_FILTER', 'filter {colour}');
    ensure(Array.isArray(body.known_keys) && body.known_keys.includes('types'), `known_keys missing or lacks "types": ${excerpt(body.known_keys)}`);
    ensure(JSON.stringify(body.invalid ?? '').includes('colour'), `invalid does not name colour: ${excerpt(body.invalid)}`);
    accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:s'), filter: { subjects: 'red' } }, m.token), 201, 'filter {subjects}');
  }),

  check('§8', 'MP-8-unknown-type', 'a types value unknown to the monitor is 400 INVALID_FILTER with known_types', async (ctx) => {
    const m = await createMonitor(ctx);
    const body = refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:s'), filter: { types: 'never.seen' } }, m.token), 400, 'INVALID_FILTER', 'types never.seen');
    ensure(Array.isArray(body.known_types) && body.known_types.includes('conform.event'), `known_types missing or lacks the declared type: ${excerpt(body.known_types)}`);
    accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:s'), filter: { types: 'conform.event' } }, m.token), 201, 'a declared type');
  }),

  check('§8', 'MP-8-vocabulary-values', 'tiers, origins and horizons values are vocabulary-checked (INVALID_FILTER)', async (ctx) => {
    const m = await createMonitor(ctx);
    refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:s'), filter: { tiers: 'gold' } }, m.token), 400, 'INVALID_FILTER', 'tiers gold');
    refused(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:s'), filter: { origins: ['agent', 'alien'] } }, m.token), 400, 'INVALID_FILTER', 'origins [agent, alien]');
    accepted(await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:s'), filter: { tiers: 'measured', origins: 'probe', horizons: 'event' } }, m.token), 201, 'valid tiers, origins, horizons');
  }),

  check('§8', 'MP-8-inline-narrow', 'pull query filters may narrow the stored filter, never widen or empty it', async (ctx) => {
    const m = await seeded(ctx);
    const s = await subscribe(ctx, m, { filter: { subjects: ['a', 'b'], types: 'conform.*' } });
    equal(picked(await pull(ctx, s, { subjects: 'a' })), ['event/a', 'other/a'], 'pull ?subjects=a');
    const t = await subscribe(ctx, m, { filter: { subjects: 'a' } });
    const body = refused(await ctx.http.get(`/subscriptions/${t.id}/pull`, { token: t.token, query: { subjects: 'b' } }), 400, 'INVALID_FILTER', 'pull ?subjects=b on a subscription filtered to a');
    ensure(JSON.stringify(body).includes('subjects'), `the refusal does not name subjects: ${excerpt(body)}`);
    refused(await ctx.http.get(`/subscriptions/${t.id}/pull`, { token: t.token, query: { colour: 'red' } }), 400, 'INVALID_FILTER', 'pull ?colour=red');
  }),

  check('§8', 'MP-8-monitor-filter', 'the monitor\'s own filter applies to every read', async (ctx) => {
    const m = await seeded(ctx, { filter: { subjects: 'a' } });
    const s = await subscribe(ctx, m);
    const subjects = (await pull(ctx, s)).observations.map((o: Wire) => o.subject);
    ensure(subjects.includes('a') && !subjects.includes('b'), `subjects read through a monitor filtered to a: ${excerpt(subjects)}`);
  }),
];
