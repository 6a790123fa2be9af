// §5 provenance defaults, ceilings and the recording of refused writes.
import { type CheckContext, check } from '../check.ts';
import { accepted, ensure, equal, excerpt, refused } from '../expect.ts';
import { createMonitor, readFeed, vendorType } from '../fixtures.ts';

const pub = (ctx: CheckContext, m: { id: string; token: string }, body: unknown) => ctx.http.post(`/monitors/${m.id}/observations`, body, m.token);

export const provenanceChecks = [
  check('§5', 'MP-5-defaults-agent', 'an agent owner\'s unstated provenance defaults below the top of each ladder', async (ctx) => {
    const m = await createMonitor(ctx);
    const o = accepted(await pub(ctx, m, { type: 'conform.event' }), 201, 'publish').observation;
    equal([o.actor, o.origin, o.tier, o.verified], ['agent:owner', 'agent', 'unverified', 'unverified'], 'actor, origin, tier, verified');
  }),

  check('§5', 'MP-5-defaults-by-kind', 'origin follows the actor prefix; tier and verification default per kind', async (ctx) => {
    const human = await createMonitor(ctx, { owner: 'human:ann' });
    const h = accepted(await pub(ctx, human, { type: 'conform.event' }), 201, 'publish as human:ann').observation;
    equal([h.actor, h.origin, h.tier, h.verified], ['human:ann', 'human', 'measured', 'reported'], 'human owner: actor, origin, tier, verified');
    const m = await createMonitor(ctx);
    const p = accepted(await pub(ctx, m, { type: 'conform.event', actor: 'probe:ping' }), 201, 'publish as probe:ping').observation;
    equal([p.origin, p.tier, p.verified], ['probe', 'measured', 'machine_verified'], 'probe actor: origin, tier, verified');
    const w = accepted(await pub(ctx, m, { type: 'conform.event', actor: 'hook:gh' }), 201, 'publish as hook:gh').observation;
    equal(w.origin, 'webhook', 'origin of a hook: actor');
    const x = accepted(await pub(ctx, m, { type: 'conform.event', actor: 'robot-without-prefix' }), 201, 'publish as an unprefixed actor').observation;
    equal([x.origin, x.tier], ['agent', 'unverified'], 'an unprefixed actor counts as an agent');
  }),

  check('§5', 'MP-5-vocabulary', 'tier, origin and verification outside their vocabularies are 400 UNKNOWN_VOCABULARY', async (ctx) => {
    const m = await createMonitor(ctx);
    const body = refused(await pub(ctx, m, { type: 'conform.event', tier: 'gold', origin: 'alien', verification: 'pinky_swear' }), 400, 'UNKNOWN_VOCABULARY', 'publish with three bad values');
    for (const value of ['gold', 'alien', 'pinky_swear']) ensure((body.invalid ?? []).some((i: unknown) => String(i).includes(value)), `invalid lacks ${value}: ${excerpt(body.invalid)}`);
    const o = accepted(await pub(ctx, m, { type: 'conform.event', tier: 'derived', origin: 'agent', verification: 'reported' }), 201, 'publish with valid values').observation;
    equal([o.tier, o.origin, o.verified], ['derived', 'agent', 'reported'], 'stored tier, origin, verified');
  }),

  check('§5', 'MP-5-tier-src', 'tier src with a non-human origin is 400 TIER_NOT_ASSERTABLE', async (ctx) => {
    const m = await createMonitor(ctx);
    refused(await pub(ctx, m, { type: 'conform.event', tier: 'src' }), 400, 'TIER_NOT_ASSERTABLE', 'agent publishes tier src');
    refused(await pub(ctx, m, { type: 'conform.event', tier: 'src', actor: 'probe:p' }), 400, 'TIER_NOT_ASSERTABLE', 'probe publishes tier src');
    const human = await createMonitor(ctx, { owner: 'human:ann' });
    const o = accepted(await pub(ctx, human, { type: 'conform.event', tier: 'src' }), 201, 'human owner publishes tier src').observation;
    equal(o.tier, 'src', 'stored tier');
  }),

  check('§5', 'MP-5-on-behalf-of', 'on_behalf_of naming anyone but the owner is 403 PROVENANCE_CEILING', async (ctx) => {
    const m = await createMonitor(ctx, { owner: 'human:ann' });
    refused(await pub(ctx, m, { type: 'conform.event', actor: 'agent:bot', on_behalf_of: 'human:mallory' }), 403, 'PROVENANCE_CEILING', 'on_behalf_of human:mallory');
    const o = accepted(await pub(ctx, m, { type: 'conform.event', actor: 'agent:bot', on_behalf_of: 'human:ann', origin: 'human', tier: 'src', verification: 'human_verified' }), 201, 'on_behalf_of the owner human:ann').observation;
    equal([o.origin, o.tier, o.verified], ['human', 'src', 'human_verified'], 'the agent reaches the owner\'s level');
    equal([o.data?.provenance?.actor, o.data?.provenance?.on_behalf_of], ['agent:bot', 'human:ann'], 'both names are kept');
  }),

  check('§5', 'MP-5-human-ceiling', 'human origin or human verification on an agent-owned monitor is 403 PROVENANCE_CEILING', async (ctx) => {
    const m = await createMonitor(ctx);
    refused(await pub(ctx, m, { type: 'conform.event', origin: 'human' }), 403, 'PROVENANCE_CEILING', 'origin human');
    refused(await pub(ctx, m, { type: 'conform.event', verification: 'human_verified' }), 403, 'PROVENANCE_CEILING', 'verification human_verified');
    refused(await pub(ctx, m, { type: 'conform.event', verification: 'certified' }), 403, 'PROVENANCE_CEILING', 'verification certified');
    accepted(await pub(ctx, m, { type: 'conform.event', verification: 'machine_verified' }), 201, 'verification machine_verified');
  }),

  check('§5', 'MP-5-human-origin-actor', 'origin human claimed by a non-human actor without on_behalf_of is 403', async (ctx) => {
    const m = await createMonitor(ctx, { owner: 'human:ann' });
    refused(await pub(ctx, m, { type: 'conform.event', actor: 'agent:bot', origin: 'human' }), 403, 'PROVENANCE_CEILING', 'agent:bot claims origin human');
    accepted(await pub(ctx, m, { type: 'conform.event', actor: 'agent:bot', origin: 'human', on_behalf_of: 'human:ann' }), 201, 'the same with on_behalf_of the owner');
  }),

  check('§5', 'MP-5-first-match', 'refusals apply in order: vocabulary, on_behalf_of, tier src, ceilings', async (ctx) => {
    const m = await createMonitor(ctx);
    refused(await pub(ctx, m, { type: 'conform.event', tier: 'gold', on_behalf_of: 'human:mallory' }), 400, 'UNKNOWN_VOCABULARY', 'bad tier and foreign on_behalf_of');
    refused(await pub(ctx, m, { type: 'conform.event', tier: 'src', on_behalf_of: 'human:mallory' }), 403, 'PROVENANCE_CEILING', 'tier src and foreign on_behalf_of');
    refused(await pub(ctx, m, { type: 'conform.event', tier: 'src', verification: 'certified' }), 400, 'TIER_NOT_ASSERTABLE', 'tier src and verification certified');
  }),

  check('§5', 'MP-5-rejected-recorded', 'a refused publish is recorded as rejected {code, reason, raw} and stored nowhere else', async (ctx) => {
    const m = await createMonitor(ctx);
    const body = { type: 'conform.refused', tier: 'gold', data: { marker: 'm-1' } };
    const refusal = refused(await pub(ctx, m, body), 400, 'UNKNOWN_VOCABULARY', 'publish with tier gold');
    ensure(Number.isSafeInteger(refusal.rejected_seq), `no rejected_seq in the refusal: ${excerpt(refusal)}`);
    const feed = await readFeed(ctx, m);
    const rejected = feed.find((o) => o.id === String(refusal.rejected_seq));
    equal(rejected?.type, vendorType(ctx, 'rejected'), `type of observation ${refusal.rejected_seq}`);
    equal(rejected.data?.payload?.code, 'UNKNOWN_VOCABULARY', 'payload.code');
    ensure(typeof rejected.data?.payload?.reason === 'string', 'payload.reason is not a string');
    const parsed = rejected.data?.payload?.raw;
    const raw = typeof parsed === 'string' ? JSON.parse(parsed) : parsed;
    // Ambiguous: "raw the request body" — a server may also keep the path
    // parameter (`id`), as the JSON-RPC params of the same call carry it.
    const withPath = raw && typeof raw === 'object' && raw.id === m.id;
    if (withPath) delete raw.id;
    equal(raw, body, 'payload.raw');
    ensure(!feed.some((o) => o.type === 'conform.refused' || o.tier === 'gold'), 'the refused value was stored as an observation');
    accepted(await pub(ctx, m, { ...body, tier: 'derived' }), 201, 'the same publish with a valid tier');
    return withPath ? 'raw keeps the body plus the path parameter id (accepted reading)' : undefined;
  }),

  check('§5', 'MP-5-rejected-other-writes', 'a refused configure is recorded too and carries rejected_seq', async (ctx) => {
    const m = await createMonitor(ctx);
    const refusal = refused(await ctx.http.post(`/monitors/${m.id}/update`, { reason: 'r', patch: { visibility: 'galactic' } }, m.token), 400, 'UNKNOWN_VOCABULARY', 'update with visibility galactic');
    ensure(Number.isSafeInteger(refusal.rejected_seq), `no rejected_seq in the refusal: ${excerpt(refusal)}`);
    const rejected = (await readFeed(ctx, m)).find((o) => o.id === String(refusal.rejected_seq));
    equal(rejected?.type, vendorType(ctx, 'rejected'), `type of observation ${refusal.rejected_seq}`);
  }),

  check('§5', 'MP-5-rejected-raw-cut', 'the raw body of a large refused write is cut to 16 KiB', async (ctx) => {
    const m = await createMonitor(ctx);
    const refusal = refused(await pub(ctx, m, { type: 'conform.event', tier: 'gold', data: { pad: 'y'.repeat(64 * 1024) } }), 400, 'UNKNOWN_VOCABULARY', 'a 64 KiB publish with tier gold');
    const rejected = (await readFeed(ctx, m)).find((o) => o.id === String(refusal.rejected_seq));
    const raw = rejected?.data?.payload?.raw;
    const size = Buffer.byteLength(typeof raw === 'string' ? raw : JSON.stringify(raw ?? null));
    ensure(size > 0 && size <= 16 * 1024 + 64, `raw is ${size} bytes, expected at most 16 KiB`);
  }),
];
