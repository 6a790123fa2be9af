// Lease operations (§12): claim, renew, complete, release and reject. The
// lease machine decides every outcome; this module checks who is asking,
// records the `lease` observation and makes the change durable.
import { leaseKey, type LeaseActor } from '../actors/root-system.ts';
import { claimRefusal, type LeaseEvent, type LeaseOutcome, leaseStateOf } from '../machines/lease-machine.ts';
import { ProtocolError, notFound } from '../protocol/errors.ts';
import { principalKind } from '../protocol/principal.ts';
import { validate, type SchemaId } from '../protocol/validate.ts';
import { isoTime } from '../protocol/wire-values.ts';
import { type Origin, observationTypes } from '../protocol/vocabulary.ts';
import type { LeaseRecord } from '../store/records.ts';
import type { Caller } from './access.ts';
import type { Reply } from './reply.ts';
import { servedLease } from './served.ts';
import { defaults } from './defaults.ts';
import type { MonitorService } from './service.ts';
import { requireLive, type SubscriptionHandle, subscriptionFor } from './subscription-handle.ts';

interface LeaseBody {
  /** The client's own words on a claim, renew or complete (base protocol), kept in the lease observation. */
  note?: string | null;
  subscription: string;
  subject: string;
  lease_duration_seconds?: number;
  on_behalf_of?: string;
  origin?: Origin;
  outcome?: unknown;
  evidence?: unknown[];
  reason?: string | null;
  /** The fencing token of the grant the caller acts on (§21); absent from base clients. */
  fence?: number;
}

function actingSubscription(service: MonitorService, body: LeaseBody, caller: Caller): SubscriptionHandle {
  const handle = subscriptionFor(service, body.subscription, caller);
  requireLive(handle);
  if (!handle.record.capabilities.includes('act')) {
    throw new ProtocolError('CAPABILITY_MISSING', `Subscription "${handle.id}" was not granted "act"; leases need it (subscribe with capabilities ["act"] using the owner or subscribe token).`, {
      granted: handle.record.capabilities,
      monitor_capabilities: handle.feed.definition.capabilities,
    });
  }
  return handle;
}

const holderOf = (handle: SubscriptionHandle) => `sub:${handle.id}`;
const noted = (body: LeaseBody) => (body.note != null ? { note: body.note } : {});
const iso = (ms: number | null) => (ms === null ? null : isoTime(ms));

function refusal(outcome: Extract<LeaseOutcome, { ok: false }>, subject: string, sent?: number): ProtocolError {
  switch (outcome.code) {
    case 'LEASE_HELD':
      return new ProtocolError('LEASE_HELD', `Subject "${subject}" is leased by ${outcome.holder} until ${iso(outcome.expiresMs)}; try again after that or pick another subject.`, {
        holder: outcome.holder,
        expires: iso(outcome.expiresMs),
      });
    case 'DEAD_LETTERED':
      return new ProtocolError('DEAD_LETTERED', `Subject "${subject}" was rejected ${defaults.deliveryCountLimit} times and is dead-lettered; it can no longer be claimed.`, {
        holder: null,
      });
    default:
      return new ProtocolError('LEASE_LOST', lostMessage(outcome, subject, sent), { holder: outcome.holder, fence: outcome.fence });
  }
}

function lostMessage(outcome: Extract<LeaseOutcome, { ok: false }>, subject: string, sent: number | undefined): string {
  if (outcome.holder === null) return `You do not hold the lease on "${subject}" (it expired, was released or was never claimed); claim it again.`;
  if (sent !== undefined && outcome.fence !== sent) {
    return `Fence ${sent} is not the current grant of "${subject}" (${outcome.holder} holds it under fence ${outcome.fence}); this request acted on nothing.`;
  }
  return `You no longer hold the lease on "${subject}": ${outcome.holder} holds it now.`;
}

function emptyLease(handle: SubscriptionHandle, subject: string): LeaseRecord {
  return {
    monitor: handle.feed.id,
    mkey: handle.feed.key,
    subject,
    holder: null,
    lease_duration_seconds: defaults.leaseSeconds,
    acquire_time: null,
    renew_time: null,
    lease_transitions: 0,
    attempts: 0,
    rejects: 0,
    expiresMs: null,
    completedBy: null,
  };
}

function leaseActor(service: MonitorService, handle: SubscriptionHandle, subject: string, create: boolean): LeaseActor | undefined {
  const key = leaseKey(handle.feed.key, subject);
  const actor = service.system.leases.get(key);
  if (actor || !create) return actor;
  return service.system.addLease({ state: 'free', record: emptyLease(handle, subject) });
}

function requireKnownSubject(service: MonitorService, handle: SubscriptionHandle, subject: string): void {
  if (!service.store.subjectSeen(handle.feed.key, subject)) {
    throw notFound(`Subject "${subject}" has not appeared on any observation of monitor "${handle.feed.id}"; only observed subjects can be leased.`);
  }
}

function apply(actor: LeaseActor, event: LeaseEvent, subject: string) {
  actor.send(event);
  const snapshot = actor.getSnapshot();
  const outcome = snapshot.context.outcome!;
  if (!outcome.ok) throw refusal(outcome, subject, event.type === 'CLAIM' ? undefined : event.fence);
  return { effect: outcome.effect, lease: snapshot.context.lease, state: leaseStateOf(snapshot.value) };
}

/**
 * The seq the next `lease` observation of this monitor will take. A claim's is its fencing token, and
 * a completion keeps its own so that a repeated complete answers it; both go to the machine on the
 * event, and `record` appends in the same turn, so nothing else can take that seq first.
 */
const nextSeq = (handle: SubscriptionHandle) => handle.feed.stats.head + 1;

function record(service: MonitorService, handle: SubscriptionHandle, lease: LeaseRecord, payload: Record<string, unknown>): number {
  const seq = service.observations.recordBookkeeping(
    handle.feed,
    observationTypes.lease,
    handle.record.subscriber,
    { ...payload, subject: lease.subject, holder: holderOf(handle), expires: iso(lease.expiresMs), fence: lease.fence ?? null },
    lease.subject,
  );
  service.persistLease(lease.mkey, lease.subject);
  return seq;
}

function parse(schema: SchemaId, service: MonitorService, input: unknown, caller: Caller) {
  const body = validate<LeaseBody>(schema, input);
  return { body, handle: actingSubscription(service, body, caller) };
}

export function claim(service: MonitorService, input: unknown, caller: Caller): Reply {
  const { body, handle } = parse('lease-claim', service, input, caller);
  const owner = handle.feed.definition.owner;
  if (body.on_behalf_of !== undefined && body.on_behalf_of !== owner) {
    throw new ProtocolError('PROVENANCE_CEILING', `A claim may only be made on behalf of this monitor's owner (${owner}); got "${body.on_behalf_of}".`);
  }
  if (body.origin === 'human' && principalKind(handle.record.subscriber) !== 'human' && body.on_behalf_of === undefined) {
    throw new ProtocolError('PROVENANCE_CEILING', `Subscriber "${handle.record.subscriber}" is not a person; a claim with origin "human" must name the owner in "on_behalf_of".`);
  }
  let actor = leaseActor(service, handle, body.subject, false);
  if (!actor) {
    requireKnownSubject(service, handle, body.subject);
    actor = leaseActor(service, handle, body.subject, true)!;
  }
  const durationSeconds = body.lease_duration_seconds ?? defaults.leaseSeconds;
  const holder = holderOf(handle);
  const now = service.now();
  const current = actor.getSnapshot();
  const refused = claimRefusal(leaseStateOf(current.value), current.context.lease, holder, now);
  if (refused) throw refusal(refused, body.subject);
  const result = apply(actor, { type: 'CLAIM', holder, durationSeconds, fence: nextSeq(handle), now }, body.subject);
  if (result.effect === 'claimed') {
    record(service, handle, result.lease, { action: 'claim', on_behalf_of: body.on_behalf_of ?? null, ...noted(body) });
  } else {
    service.confirmUnchanged(handle.feed.key);
  }
  return {
    status: result.effect === 'claimed' ? 201 : 200,
    body: {
      lease: servedLease(result.state, result.lease),
      expires: iso(result.lease.expiresMs),
      fence: result.lease.fence ?? null,
      idempotent: result.effect !== 'claimed',
    },
  };
}

/** Renew, complete, release and reject all need an existing lease held by the caller. */
function heldLease(service: MonitorService, handle: SubscriptionHandle, subject: string): LeaseActor {
  const actor = leaseActor(service, handle, subject, false);
  if (actor) return actor;
  requireKnownSubject(service, handle, subject);
  throw refusal({ ok: false, code: 'LEASE_LOST', holder: null, expiresMs: null, fence: null }, subject);
}

export function renewLease(service: MonitorService, input: unknown, caller: Caller): Reply {
  const { body, handle } = parse('lease-renew', service, input, caller);
  const actor = heldLease(service, handle, body.subject);
  const event: LeaseEvent = { type: 'RENEW', holder: holderOf(handle), fence: body.fence, now: service.now() };
  if (body.lease_duration_seconds !== undefined) event.durationSeconds = body.lease_duration_seconds;
  const result = apply(actor, event, body.subject);
  record(service, handle, result.lease, { action: 'renew', ...noted(body) });
  return {
    status: 200,
    body: { lease: servedLease(result.state, result.lease), expires: iso(result.lease.expiresMs), fence: result.lease.fence ?? null },
  };
}

export function completeLease(service: MonitorService, input: unknown, caller: Caller): Reply {
  const { body, handle } = parse('lease-complete', service, input, caller);
  const actor = heldLease(service, handle, body.subject);
  const result = apply(actor,
    {
      type: 'COMPLETE',
      holder: holderOf(handle),
      outcome: body.outcome,
      evidence: body.evidence,
      fence: body.fence,
      seq: nextSeq(handle),
      now: service.now(),
    },
    body.subject,
  );
  if (result.effect === 'completed') {
    handle.feed.stats.acted++;
    service.persistMonitor(handle.feed);
    record(service, handle, result.lease, { action: 'complete', outcome: body.outcome ?? null, evidence: body.evidence ?? [], ...noted(body) });
  } else {
    service.confirmUnchanged(handle.feed.key);
  }
  return { status: 200, body: { ok: true, seq: result.lease.completedSeq ?? null, lease: servedLease(result.state, result.lease) } };
}

export function releaseLease(service: MonitorService, input: unknown, caller: Caller): Reply {
  const { body, handle } = parse('lease-release', service, input, caller);
  const actor = heldLease(service, handle, body.subject);
  const result = apply(actor, { type: 'RELEASE', holder: holderOf(handle), fence: body.fence, now: service.now() }, body.subject);
  const seq = record(service, handle, result.lease, { action: 'release', reason: body.reason ?? null });
  const lease = servedLease(result.state, result.lease);
  return { status: 200, body: { ok: true, seq, dead_letter: lease.dead_letter, lease } };
}

export function rejectLease(service: MonitorService, input: unknown, caller: Caller): Reply {
  const { body, handle } = parse('lease-release', service, input, caller);
  const actor = heldLease(service, handle, body.subject);
  const result = apply(actor, { type: 'REJECT', holder: holderOf(handle), fence: body.fence, now: service.now() }, body.subject);
  const seq = record(service, handle, result.lease, {
    action: 'reject',
    reason: body.reason ?? null,
    rejects: result.lease.rejects,
    dead_lettered: result.effect === 'dead_lettered',
  });
  const lease = servedLease(result.state, result.lease);
  return { status: 200, body: { ok: true, seq, dead_letter: lease.dead_letter, lease } };
}
