// §12 leases: capability, claim, idempotence, holder, lost, dead letters, expiry.
import { type CheckContext, check } from '../check.ts';
import { accepted, ensure, equal, excerpt, hasKeys, refused } from '../expect.ts';
import { createMonitor, expectSystemActor, type MonitorHandle, publish, pull, subscribe, type SubscriptionHandle, vendorType } from '../fixtures.ts';
import type { Wire } from '../wire-client.ts';

const leaseFields = ['subject', 'holder', 'lease_duration_seconds', 'acquire_time', 'renew_time', 'lease_transitions', 'attempts', 'delivery_count_limit', 'dead_letter', 'monitor', 'state', 'expires'];

/** A monitor with `act`, one published subject, and two act subscriptions. */
async function workbench(ctx: CheckContext, owner?: string): Promise<{ m: MonitorHandle; subject: string; a: SubscriptionHandle; b: SubscriptionHandle }> {
  const m = await createMonitor(ctx, { capabilities: ['observe', 'act'], ...(owner ? { owner } : {}) });
  const subject = ctx.unique('job');
  await publish(ctx, m, { type: 'conform.event', subject });
  const a = await subscribe(ctx, m, { capabilities: ['act'] });
  const b = await subscribe(ctx, m, { capabilities: ['act'] });
  return { m, subject, a, b };
}

const lease = (ctx: CheckContext, s: SubscriptionHandle, action: string, body: Record<string, unknown>) => ctx.http.post(`/subscriptions/${s.id}/leases/${action}`, body, s.token);

export const leaseChecks = [
  check('§12', 'MP-12-needs-act', 'lease operations need a subscription holding act (403 CAPABILITY_MISSING)', async (ctx) => {
    const { m, subject, a } = await workbench(ctx);
    const observer = await subscribe(ctx, m, { capabilities: ['observe'] });
    refused(await lease(ctx, observer, 'claim', { subject }), 403, 'CAPABILITY_MISSING', 'claim by an observe-only subscription');
    refused(await ctx.http.post(`/subscriptions/${a.id}/leases/claim`, { subject }), 401, 'UNAUTHORIZED', 'claim without a token');
    const body = accepted(await lease(ctx, a, 'claim', { subject }), 201, 'claim by an act subscription');
    hasKeys(body, ['lease', 'expires'], 'claim reply');
    hasKeys(body.lease, leaseFields, 'lease');
    equal([body.lease.holder, body.lease.state, body.lease.delivery_count_limit, body.lease.lease_duration_seconds], [`sub:${a.id}`, 'held', 5, 300], 'holder, state, delivery_count_limit, default duration');
  }),

  check('§12', 'MP-12-unknown-subject', 'a subject never observed on the monitor is 404 NOT_FOUND', async (ctx) => {
    const { subject, a } = await workbench(ctx);
    refused(await lease(ctx, a, 'claim', { subject: `${subject}-never` }), 404, 'NOT_FOUND', 'claim of an unseen subject');
    accepted(await lease(ctx, a, 'claim', { subject }), 201, 'claim of a seen subject');
  }),

  check('§12', 'MP-12-duration', 'lease_duration_seconds outside 1–86400 is 400 INVALID', async (ctx) => {
    const { subject, a } = await workbench(ctx);
    refused(await lease(ctx, a, 'claim', { subject, lease_duration_seconds: 0 }), 400, 'INVALID', 'duration 0');
    refused(await lease(ctx, a, 'claim', { subject, lease_duration_seconds: 86401 }), 400, 'INVALID', 'duration 86401');
    refused(await lease(ctx, a, 'claim', { subject, lease_duration_seconds: 'long' }), 400, 'INVALID', 'duration "long"');
    const body = accepted(await lease(ctx, a, 'claim', { subject, lease_duration_seconds: 86400 }), 201, 'duration 86400');
    equal(body.lease.lease_duration_seconds, 86400, 'lease_duration_seconds');
  }),

  check('§12', 'MP-12-idempotent-claim', 'a claim already held by the caller answers 200 with the same lease', async (ctx) => {
    const { subject, a } = await workbench(ctx);
    const first = accepted(await lease(ctx, a, 'claim', { subject }), 201, 'first claim');
    const second = accepted(await lease(ctx, a, 'claim', { subject }), 200, 'second claim by the holder');
    equal([second.lease.holder, second.lease.acquire_time, second.expires], [first.lease.holder, first.lease.acquire_time, first.expires], 'holder, acquire_time, expires');
  }),

  check('§12', 'MP-12-lease-held', 'a claim held by someone else is 409 LEASE_HELD naming holder and expires', async (ctx) => {
    const { subject, a, b } = await workbench(ctx);
    const first = accepted(await lease(ctx, a, 'claim', { subject }), 201, 'claim by A');
    const body = refused(await lease(ctx, b, 'claim', { subject }), 409, 'LEASE_HELD', 'claim by B while A holds it');
    equal([body.holder, body.expires], [`sub:${a.id}`, first.expires], 'holder and expires in LEASE_HELD');
    accepted(await lease(ctx, a, 'release', { subject, reason: 'hand over' }), 200, 'release by A');
    accepted(await lease(ctx, b, 'claim', { subject }), 201, 'claim by B after the release');
  }),

  check('§12', 'MP-12-lease-lost', 'renew, complete, release or reject by a non-holder is 409 LEASE_LOST {holder}', async (ctx) => {
    const { subject, a, b } = await workbench(ctx);
    accepted(await lease(ctx, a, 'claim', { subject }), 201, 'claim by A');
    for (const action of ['renew', 'complete', 'release', 'reject']) {
      const body = refused(await lease(ctx, b, action, { subject }), 409, 'LEASE_LOST', `${action} by B`);
      equal(body.holder, `sub:${a.id}`, `holder in LEASE_LOST of ${action}`);
    }
    const renewed = accepted(await lease(ctx, a, 'renew', { subject, lease_duration_seconds: 60 }), 200, 'renew by A');
    hasKeys(renewed, ['lease', 'expires'], 'renew reply');
  }),

  check('§12', 'MP-12-complete', 'complete is repeatable with the same reply, counts as acted, writes lease observations', async (ctx) => {
    const { m, subject, a } = await workbench(ctx);
    accepted(await lease(ctx, a, 'claim', { subject }), 201, 'claim');
    const done = { subject, outcome: 'fixed', evidence: [{ url: 'https://example.invalid/ci/1' }] };
    const first = accepted(await lease(ctx, a, 'complete', done), 200, 'complete');
    equal([first.lease?.state, first.lease?.outcome], ['completed', 'fixed'], 'state and outcome');
    const again = accepted(await lease(ctx, a, 'complete', done), 200, 'the same complete again');
    equal(again, first, 'reply of the repeated complete');
    const state = accepted(await ctx.http.get(`/monitors/${m.id}/state`, { token: m.token }), 200, 'state');
    equal(state.counters.acted, 1, 'counters.acted');
    const reader = await subscribe(ctx, m, { filter: { types: vendorType(ctx, 'lease') } });
    const actions = (await pull(ctx, reader)).observations.map((o: Wire) => o.data?.payload?.action);
    ensure(actions.includes('claim') && actions.includes('complete'), `lease observations lack claim/complete: ${excerpt(actions)}`);
  }),

  check('§12', 'MP-12-lease-counts', 'attempts counts claims, lease_transitions counts holder changes; renew extends, release frees', async (ctx) => {
    const { subject, a, b } = await workbench(ctx);
    accepted(await lease(ctx, a, 'claim', { subject, lease_duration_seconds: 30 }), 201, 'claim by A');
    const renewed = accepted(await lease(ctx, a, 'renew', { subject, lease_duration_seconds: 600 }), 200, 'renew by A for 600 s');
    ensure(Date.parse(renewed.expires) - Date.now() > 300_000, `renew for 600 s set expires to ${renewed.expires}`);
    const released = accepted(await lease(ctx, a, 'release', { subject }), 200, 'release by A');
    equal([released.lease?.state, released.lease?.holder], ['free', null], 'state and holder after release');
    const claimed = accepted(await lease(ctx, b, 'claim', { subject }), 201, 'claim by B');
    equal([claimed.lease.attempts, claimed.lease.holder], [2, `sub:${b.id}`], 'attempts and holder after two claims');
    ensure(claimed.lease.lease_transitions >= 2, `lease_transitions is ${claimed.lease.lease_transitions} after A, free, B`);
  }),

  check('§12', 'MP-12-dead-letter', 'the fifth reject of a subject dead-letters it (409 DEAD_LETTERED)', async (ctx) => {
    const { subject, a } = await workbench(ctx);
    for (let i = 1; i <= 5; i++) {
      accepted(await lease(ctx, a, 'claim', { subject }), 201, `claim ${i}`);
      accepted(await lease(ctx, a, 'reject', { subject, reason: `attempt ${i}` }), 200, `reject ${i}`);
    }
    refused(await lease(ctx, a, 'claim', { subject }), 409, 'DEAD_LETTERED', 'claim after five rejects');
  }),

  check('§12', 'MP-12-claim-provenance', 'claims naming a non-owner or asserting human origin without the owner are 403 PROVENANCE_CEILING', async (ctx) => {
    const { subject, a } = await workbench(ctx, 'human:ann');
    refused(await lease(ctx, a, 'claim', { subject, on_behalf_of: 'human:mallory' }), 403, 'PROVENANCE_CEILING', 'claim on behalf of human:mallory');
    refused(await lease(ctx, a, 'claim', { subject, origin: 'human' }), 403, 'PROVENANCE_CEILING', 'claim with origin human and no on_behalf_of');
    accepted(await lease(ctx, a, 'claim', { subject, origin: 'human', on_behalf_of: 'human:ann' }), 201, 'claim with origin human on behalf of the owner');
  }),

  check('§12', 'MP-12-expiry', 'a lease expires at expires without Wire request and writes {action: "expired"}', async (ctx) => {
    const { m, subject, a, b } = await workbench(ctx);
    const watcher = await subscribe(ctx, m, { from: 'head', filter: { types: vendorType(ctx, 'lease') } });
    const claimed = accepted(await lease(ctx, a, 'claim', { subject, lease_duration_seconds: 1 }), 201, 'claim for 1 s');
    const until = Date.now() + 5000;
    let expired: Wire;
    let cursor = (await pull(ctx, watcher)).next;
    while (!expired && Date.now() < until) {
      const page = await pull(ctx, watcher, { wait: 1, cursor });
      expired = page.observations.find((o: Wire) => o.data?.payload?.action === 'expired');
      cursor = page.next;
    }
    ensure(expired, 'no lease observation with action "expired" within 5 s of a 1 s lease');
    equal(expired.data.payload.holder, `sub:${a.id}`, 'holder of the expiry');
    expectSystemActor(ctx, expired.actor, 'actor of the expiry');
    ensure(expired.time >= claimed.expires, `expired at ${expired.time}, before expires ${claimed.expires}`);
    accepted(await lease(ctx, b, 'claim', { subject }), 201, 'claim by B after the expiry');
    refused(await lease(ctx, a, 'complete', { subject }), 409, 'LEASE_LOST', 'complete by A after the expiry');
  }, 12_000),
];
