// §4 observations and publish; §6 reserved types.
import { check } from '../check.ts';
import { accepted, ensure, equal, excerpt, hasKeys, refused } from '../expect.ts';
import { createMonitor, publish, readFeed, vendorType } from '../fixtures.ts';

const provenanceKeys = ['origin', 'tier', 'verification', 'actor', 'on_behalf_of', 'attested', 'source_ref', 'wasDerivedFrom', 'wasAttributedTo', 'supersedes'];

export const publishChecks = [
  check('§4', 'MP-4-observation-shape', 'an observation is a CloudEvents 1.0 event with the §4 fields', async (ctx) => {
    const m = await createMonitor(ctx);
    const reply = await ctx.http.post(`/monitors/${m.id}/observations`, { type: 'conform.event', subject: 's-1', data: { n: 1 }, tags: { env: 'test' } }, m.token);
    const body = accepted(reply, 201, 'publish');
    const o = body.observation;
    hasKeys(o, ['specversion', 'id', 'source', 'type', 'subject', 'time', 'datacontenttype', 'sequence', 'tier', 'origin', 'verified', 'horizon', 'actor', 'data'], 'observation');
    equal([o.specversion, o.id, o.source, o.type, o.subject, o.datacontenttype], ['1.0', String(body.seq), `monitor:${m.id}`, 'conform.event', 's-1', 'application/json'], 'specversion, id, source, type, subject, datacontenttype');
    equal(o.sequence, String(body.seq).padStart(20, '0'), 'sequence (seq zero-padded to 20 digits)');
    ensure(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(o.time), `time is not ISO-8601 UTC with milliseconds: ${o.time}`);
    equal([o.data.n, o.data.tags], [1, { env: 'test' }], 'publisher data and tags');
    hasKeys(o.data.provenance, provenanceKeys, 'data.provenance');
  }),

  check('§4', 'MP-4-seq-contiguous', 'seq is per monitor, starts at 1, and has no gaps', async (ctx) => {
    const a = await createMonitor(ctx);
    const b = await createMonitor(ctx);
    const seqs = [];
    for (let i = 0; i < 3; i++) seqs.push(await publish(ctx, a, { type: 'conform.event' }));
    await publish(ctx, b, { type: 'conform.event' });
    seqs.push(await publish(ctx, a, { type: 'conform.event' }));
    const first = seqs[0]!;
    equal(seqs, [first, first + 1, first + 2, first + 3], 'seqs of four publishes with another monitor publishing in between');
    const feed = await readFeed(ctx, a);
    equal(feed[0]?.id, '1', 'the first seq of a monitor');
    for (const [i, o] of feed.entries()) ensure(Number(o.id) === i + 1, `gap in the feed at position ${i}: id ${o.id}`);
  }),

  check('§4', 'MP-4-batch', 'a batch publish returns 201 {seqs} in order', async (ctx) => {
    const m = await createMonitor(ctx);
    const body = accepted(await ctx.http.post(`/monitors/${m.id}/observations`, { observations: [{ type: 'conform.event', subject: 'a' }, { type: 'conform.event', subject: 'b' }] }, m.token), 201, 'batch of two');
    ensure(Array.isArray(body.seqs) && body.seqs.length === 2 && body.seqs[1] === body.seqs[0] + 1, `seqs are not two consecutive numbers: ${excerpt(body.seqs)}`);
  }),

  check('§4', 'MP-4-batch-all-or-nothing', 'a batch with one refused observation stores none of them', async (ctx) => {
    const m = await createMonitor(ctx);
    const bad = { observations: [{ type: 'conform.event', subject: 'kept?' }, { type: 'conform.event', tier: 'legendary' }] };
    refused(await ctx.http.post(`/monitors/${m.id}/observations`, bad, m.token), 400, 'UNKNOWN_VOCABULARY', 'batch with one bad tier');
    const stored = (await readFeed(ctx, m)).filter((o) => o.type === 'conform.event');
    equal(stored.length, 0, 'observations of the refused batch in the feed');
    accepted(await ctx.http.post(`/monitors/${m.id}/observations`, { observations: [{ type: 'conform.event' }, { type: 'conform.event', tier: 'derived' }] }, m.token), 201, 'the same batch with a valid tier');
  }),

  check('§4', 'MP-4-publish-owner', 'publishing needs the owner token (401 UNAUTHORIZED)', async (ctx) => {
    const m = await createMonitor(ctx, { visibility: 'public' });
    refused(await ctx.http.post(`/monitors/${m.id}/observations`, { type: 'conform.event' }), 401, 'UNAUTHORIZED', 'publish without a token');
    refused(await ctx.http.post(`/monitors/${m.id}/observations`, { type: 'conform.event' }, `${m.token}x`), 401, 'UNAUTHORIZED', 'publish with a wrong token');
    accepted(await ctx.http.post(`/monitors/${m.id}/observations`, { type: 'conform.event' }, m.token), 201, 'publish with the owner token');
  }),

  check('§4', 'MP-4-type-required', 'an observation without a type is 400 INVALID', async (ctx) => {
    const m = await createMonitor(ctx);
    refused(await ctx.http.post(`/monitors/${m.id}/observations`, { subject: 'x' }, m.token), 400, 'INVALID', 'publish without type');
    refused(await ctx.http.post(`/monitors/${m.id}/observations`, { type: 42 }, m.token), 400, 'INVALID', 'publish with a numeric type');
    accepted(await ctx.http.post(`/monitors/${m.id}/observations`, { type: 'conform.event', subject: 'x' }, m.token), 201, 'publish with a type');
  }),

  check('§6', 'MP-6-reserved-types', 'state and bookmark are reserved (400 INVALID); contradiction may be published', async (ctx) => {
    const m = await createMonitor(ctx);
    refused(await ctx.http.post(`/monitors/${m.id}/observations`, { type: vendorType(ctx, 'state') }, m.token), 400, 'INVALID', 'publish of the reserved state type');
    refused(await ctx.http.post(`/monitors/${m.id}/observations`, { type: vendorType(ctx, 'bookmark') }, m.token), 400, 'INVALID', 'publish of the reserved bookmark type');
    accepted(await ctx.http.post(`/monitors/${m.id}/observations`, { type: vendorType(ctx, 'contradiction'), subject: 'x' }, m.token), 201, 'publish of a contradiction');
  }),

  check('§4', 'MP-4-supersedes', 'a correction keeps supersedes and wasDerivedFrom in its provenance', async (ctx) => {
    const m = await createMonitor(ctx);
    const seq = await publish(ctx, m, { type: 'conform.event', subject: 'x', data: { v: 1 } });
    const ref = { source: `monitor:${m.id}`, id: String(seq) };
    const body = accepted(await ctx.http.post(`/monitors/${m.id}/observations`, { type: 'conform.event', subject: 'x', data: { v: 2 }, supersedes: ref, wasDerivedFrom: [ref] }, m.token), 201, 'publish a correction');
    const p = body.observation?.data?.provenance;
    equal([p?.supersedes, p?.wasDerivedFrom], [ref, [ref]], 'provenance supersedes, wasDerivedFrom');
    const original = (await readFeed(ctx, m)).find((o) => o.id === String(seq));
    equal(original?.data?.v, 1, 'the superseded observation is unchanged');
  }),
];
