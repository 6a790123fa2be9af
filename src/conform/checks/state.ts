// §7 the state document.
import { type CheckContext, check } from '../check.ts';
import { accepted, ensure, equal, excerpt, hasKeys, sleep } from '../expect.ts';
import { createMonitor, publish, pull, subscribe, vendorType } from '../fixtures.ts';

const gapOrder = ['independence_unknown', 'no_event_provenance', 'single_actor', 'stale_source', 'no_subscribers', 'unattested_origin'];

const readState = async (ctx: CheckContext, m: { id: string; token: string }) => accepted(await ctx.http.get(`/monitors/${m.id}/state`, { token: m.token }), 200, 'GET state');

export const stateChecks = [
  check('§7', 'MP-7-fields', 'the state document has every §7 field; unknown ages are null', async (ctx) => {
    const m = await createMonitor(ctx);
    const s = await readState(ctx, m);
    hasKeys(s, ['monitor', 'as_of', 'as_of_seq', 'head', 'retention_floor', 'covers_until', 'live', 'counters', 'last', 'ages', 'contradictions_open', 'confidence', 'computed_from', 'ttl_ms', 'supersedes'], 'state');
    hasKeys(s.counters, ['observations', 'rejected', 'delivered', 'acted', 'subscriptions_active'], 'counters');
    hasKeys(s.ages, ['since_last_observation_s', 'since_last_pull_s', 'since_last_source_contact_s'], 'ages');
    hasKeys(s.confidence, ['value', 'computed_by', 'inputs', 'gaps'], 'confidence');
    hasKeys(s.computed_from, ['seq_from', 'seq_to'], 'computed_from');
    equal([s.live, s.covers_until, s.ages.since_last_pull_s, s.confidence.value, s.supersedes], [{ value: true, reason: null }, null, null, null, null], 'live, covers_until, since_last_pull_s, confidence.value, supersedes of a fresh monitor');
    ensure(Array.isArray(s.confidence.inputs?.missing) && Array.isArray(s.confidence.inputs?.present), `confidence.inputs is not {present, missing}: ${excerpt(s.confidence.inputs)}`);
  }),

  check('§7', 'MP-7-counters', 'counters, head, last and covers_until follow what was recorded', async (ctx) => {
    const m = await createMonitor(ctx);
    await publish(ctx, m, { type: 'conform.event' });
    const seq = await publish(ctx, m, { type: 'conform.other' });
    const published = accepted(await ctx.http.get(`/monitors/${m.id}`, { token: m.token }), 200, 'GET monitor');
    await ctx.http.post(`/monitors/${m.id}/observations`, { type: 'conform.event', tier: 'gold' }, m.token);
    const s = await readState(ctx, m);
    equal([s.counters.observations, s.counters.rejected], [2, 1], 'counters observations, rejected');
    equal([s.head, s.as_of_seq], [seq + 1, seq + 1], 'head and as_of_seq (after the rejection)');
    equal([s.last?.seq, s.last?.type], [seq + 1, vendorType(ctx, 'rejected')], 'last seq and type');
    ensure(typeof s.covers_until === 'string' && s.covers_until >= published.created, `covers_until is not the last source time: ${excerpt(s.covers_until)}`);
  }),

  check('§7', 'MP-7-live', 'live says {value: false, reason} when paused or retired', async (ctx) => {
    const m = await createMonitor(ctx);
    await ctx.http.post(`/monitors/${m.id}/pause`, { reason: 'p' }, m.token);
    equal((await readState(ctx, m)).live, { value: false, reason: 'paused' }, 'live when paused');
    await ctx.http.post(`/monitors/${m.id}/retire`, { reason: 'r' }, m.token);
    equal((await readState(ctx, m)).live, { value: false, reason: 'retired' }, 'live when retired');
  }),

  check('§7', 'MP-7-contradictions', 'contradictions_open counts contradictions without a later resolution', async (ctx) => {
    const m = await createMonitor(ctx);
    await publish(ctx, m, { type: vendorType(ctx, 'contradiction'), subject: 'a' });
    const b = await publish(ctx, m, { type: vendorType(ctx, 'contradiction'), subject: 'b' });
    equal((await readState(ctx, m)).contradictions_open, 2, 'contradictions_open after two contradictions');
    await publish(ctx, m, { type: vendorType(ctx, 'contradiction_resolved'), subject: 'a' });
    equal((await readState(ctx, m)).contradictions_open, 1, 'after resolving subject a');
    await publish(ctx, m, { type: vendorType(ctx, 'contradiction_resolved'), subject: 'other', data: { resolves: b } });
    equal((await readState(ctx, m)).contradictions_open, 0, `after resolving seq ${b} by data.resolves`);
  }),

  check('§7', 'MP-7-gaps', 'gaps are from the vocabulary, in order, and no_subscribers clears on subscribe', async (ctx) => {
    const m = await createMonitor(ctx);
    const before: string[] = (await readState(ctx, m)).confidence.gaps;
    ensure(before.every((g) => gapOrder.includes(g)), `a gap outside the vocabulary: ${excerpt(before)}`);
    equal([...before].sort((x, y) => gapOrder.indexOf(x) - gapOrder.indexOf(y)), before, 'gap order');
    ensure(before[0] === 'independence_unknown', `independence_unknown should come first: ${excerpt(before)}`);
    ensure(before.includes('no_subscribers') && before.includes('unattested_origin'), `a fresh unattested monitor should list no_subscribers and unattested_origin: ${excerpt(before)}`);
    await subscribe(ctx, m);
    const after: string[] = (await readState(ctx, m)).confidence.gaps;
    ensure(!after.includes('no_subscribers'), `no_subscribers is still listed with a live subscription: ${excerpt(after)}`);
  }),

  check('§7', 'MP-7-stale-source', 'stale_source appears once ttl_seconds pass without the source', async (ctx) => {
    const m = await createMonitor(ctx, { ttl_seconds: 1 });
    const sent = Date.now();
    await publish(ctx, m, { type: 'conform.event' });
    const fresh = await readState(ctx, m);
    // Only a state read within the ttl of the publish says anything (a slow server or network may take longer).
    if (Date.now() - sent < 1000) ensure(!fresh.confidence.gaps.includes('stale_source'), 'stale_source right after a publish');
    await sleep(1300);
    const gaps = (await readState(ctx, m)).confidence.gaps;
    ensure(gaps.includes('stale_source'), `no stale_source 1.3 s after the last publish with ttl_seconds 1: ${excerpt(gaps)}`);
  }),

  check('§7', 'MP-7-delivered', 'delivered counts acknowledged observations; since_last_pull_s becomes known', async (ctx) => {
    const m = await createMonitor(ctx);
    await publish(ctx, m, { type: 'conform.event' });
    await publish(ctx, m, { type: 'conform.event' });
    const s = await subscribe(ctx, m, { filter: { types: 'conform.event' } });
    const page = await pull(ctx, s);
    accepted(await ctx.http.post(`/subscriptions/${s.id}/ack`, { cursor: page.next }, s.token), 200, 'ack');
    const state = await readState(ctx, m);
    ensure(state.counters.delivered >= 2, `delivered is ${state.counters.delivered} after acknowledging two observations`);
    ensure(typeof state.ages.since_last_pull_s === 'number', `since_last_pull_s after a pull: ${excerpt(state.ages.since_last_pull_s)}`);
    equal(state.counters.subscriptions_active, 1, 'subscriptions_active');
  }),
];
