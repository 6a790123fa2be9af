// What every lease operation shares (§12, §21): the acting subscription and
// its checks, the lease actor of a subject, the refusals as the protocol words
// them, a grant with its fencing token, and the `lease` observation each
// change records. The operations are in lease-operations.ts (named
// subjects), lease-take.ts (take-next) and lease-next.ts (complete, release
// or reject and take the next; several completions at once).
import { leaseKey, type LeaseActor } from '../actors/root-system.ts';
import { type LeaseEvent, type LeaseOutcome, leaseStateOf } from '../machines/lease-machine.ts';
import { ProtocolError, notFound } from '../protocol/errors.ts';
import { principalKind } from '../protocol/principal.ts';
import { validate, type SchemaId } from '../protocol/validate.ts';
import { isoTime } from '../protocol/wire-values.ts';
import { type Origin, observationTypes } from '../protocol/vocabulary.ts';
import type { LeaseRecord, LeaseState } from '../store/records.ts';
import type { Caller } from './access.ts';
import { defaults } from './defaults.ts';
import type { MonitorService } from './service.ts';
import { requireLive, type SubscriptionHandle, subscriptionFor } from './subscription-handle.ts';

/** `next` on complete, release and reject (§21): take the next subject in the same commit. */
export type NextOption = boolean | { count?: number; lease_duration_seconds?: number };

export interface CompleteItem {
  subject: string;
  fence?: number;
  outcome?: unknown;
  evidence?: unknown[];
}

export interface LeaseBody {
  /** The client's own words on a claim, renew or complete (base protocol), kept in the lease observation. */
  note?: string | null;
  subscription: string;
  subject?: string;
  lease_duration_seconds?: number;
  on_behalf_of?: string;
  origin?: Origin;
  outcome?: unknown;
  evidence?: unknown[];
  reason?: string | null;
  /** The fencing token of the grant the caller acts on (§21); absent from base clients. */
  fence?: number;
  /** Take-next (§21): on claim `true`; on complete, release and reject a NextOption. */
  next?: NextOption;
  count?: number;
  wait?: number;
  items?: CompleteItem[];
}

export function actingSubscription(service: MonitorService, body: LeaseBody, caller: Caller): SubscriptionHandle {
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

/** The body checked (its schema, then `check`) before any state is looked at, and the acting subscription. */
export function parse(schema: SchemaId, service: MonitorService, input: unknown, caller: Caller, check?: (body: LeaseBody) => void) {
  const body = validate<LeaseBody>(schema, input);
  check?.(body);
  return { body, handle: actingSubscription(service, body, caller) };
}

/** A claim is made by the subscription itself or on behalf of the monitor's owner (§12). */
export function checkProvenance(handle: SubscriptionHandle, body: LeaseBody): void {
  const owner = handle.feed.definition.owner;
  if (body.on_behalf_of !== undefined && body.on_behalf_of !== owner) {
    throw new ProtocolError('PROVENANCE_CEILING', `A claim may only be made on behalf of this monitor's owner (${owner}); got "${body.on_behalf_of}".`);
  }
  if (body.origin === 'human' && principalKind(handle.record.subscriber) !== 'human' && body.on_behalf_of === undefined) {
    throw new ProtocolError('PROVENANCE_CEILING', `Subscriber "${handle.record.subscriber}" is not a person; a claim with origin "human" must name the owner in "on_behalf_of".`);
  }
}

export const holderOf = (handle: SubscriptionHandle) => `sub:${handle.id}`;
/** The note a call carries, as the lease observation keeps it. */
export const noted = (body: { note?: string | null }) => (body.note != null ? { note: body.note } : {});
export const iso = (ms: number | null) => (ms === null ? null : isoTime(ms));

export function refusal(outcome: Extract<LeaseOutcome, { ok: false }>, subject: string, sent?: number): ProtocolError {
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

export function emptyLease(handle: SubscriptionHandle, subject: string): LeaseRecord {
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

/** The subject's lease actor (restored from its row); with `create`, a free one for a subject never leased. */
export function leaseActor(service: MonitorService, handle: SubscriptionHandle, subject: string, create: boolean): LeaseActor | undefined {
  const key = leaseKey(handle.feed.key, subject);
  const actor = service.system.leases.get(key);
  if (actor || !create) return actor;
  return service.system.addLease({ state: 'free', record: emptyLease(handle, subject) });
}

export function requireKnownSubject(service: MonitorService, handle: SubscriptionHandle, subject: string): void {
  if (!service.store.subjectSeen(handle.feed.key, subject)) {
    throw notFound(`Subject "${subject}" has not appeared on any observation of monitor "${handle.feed.id}"; only observed subjects can be leased.`);
  }
}

/** Renew, complete, release and reject all need an existing lease held by the caller. */
export function heldLease(service: MonitorService, handle: SubscriptionHandle, subject: string): LeaseActor {
  const actor = leaseActor(service, handle, subject, false);
  if (actor) return actor;
  requireKnownSubject(service, handle, subject);
  throw refusal({ ok: false, code: 'LEASE_LOST', holder: null, expiresMs: null, fence: null }, subject);
}

export interface Applied {
  effect: Extract<LeaseOutcome, { ok: true }>['effect'];
  lease: LeaseRecord;
  state: LeaseState;
}

export function apply(actor: LeaseActor, event: LeaseEvent, subject: string): Applied {
  actor.send(event);
  const snapshot = actor.getSnapshot();
  const outcome = snapshot.context.outcome!;
  if (!outcome.ok) throw refusal(outcome, subject, event.type === 'CLAIM' ? undefined : event.fence);
  return { effect: outcome.effect, lease: snapshot.context.lease, state: leaseStateOf(snapshot.value) };
}

/**
 * The seq the next `lease` observation of this monitor will take. A completion keeps its own so that
 * a repeated complete answers it; it goes to the machine on the event, and `record` appends in the
 * same turn, so nothing else can take that seq first.
 */
export const nextSeq = (handle: SubscriptionHandle) => handle.feed.stats.head + 1;

/** Appends the change's `lease` observation; returns its seq. */
export function recordObservation(service: MonitorService, handle: SubscriptionHandle, lease: LeaseRecord, payload: Record<string, unknown>): number {
  return service.observations.recordBookkeeping(
    handle.feed,
    observationTypes.lease,
    handle.record.subscriber,
    { ...payload, subject: lease.subject, holder: holderOf(handle), expires: iso(lease.expiresMs), fence: lease.fence ?? null },
    lease.subject,
  );
}

/** Records the change of an actor's lease and queues its row. */
export function record(service: MonitorService, handle: SubscriptionHandle, lease: LeaseRecord, payload: Record<string, unknown>): number {
  const seq = recordObservation(service, handle, lease, payload);
  service.leaseRows.persist(lease.mkey, lease.subject);
  return seq;
}

export interface GrantRequest {
  readonly holder: string;
  readonly durationSeconds: number;
  readonly now: number;
  readonly onBehalfOf?: string;
  /** Take-next's place of the subject, kept on the lease. */
  readonly queued?: number;
  readonly note?: string | null;
}

/**
 * Sends CLAIM and records the grant. Its fence is the seq its own `lease` observation takes: after
 * the expiry the machine records first when the lease it takes over had lapsed (protocol.md §21).
 */
export function grant(service: MonitorService, handle: SubscriptionHandle, actor: LeaseActor, request: GrantRequest): Applied {
  const before = actor.getSnapshot();
  const lease = before.context.lease;
  const lapsed = leaseStateOf(before.value) === 'held' && lease.expiresMs !== null && request.now >= lease.expiresMs;
  const event: LeaseEvent = { type: 'CLAIM', holder: request.holder, durationSeconds: request.durationSeconds, fence: nextSeq(handle) + (lapsed ? 1 : 0), now: request.now };
  if (request.queued !== undefined) event.queued = request.queued;
  const result = apply(actor, event, lease.subject);
  if (result.effect === 'claimed') record(service, handle, result.lease, { action: 'claim', on_behalf_of: request.onBehalfOf ?? null, ...noted(request) });
  return result;
}
