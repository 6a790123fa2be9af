// Lease operations (§12): claim, renew, complete, release and reject. The
// lease machine decides every outcome; this module checks who is asking,
// records the `lease` observation and makes the change durable. The §21
// extensions branch off here: a claim with `next` takes the next subject
// (lease-take.ts); complete, release and reject with `next`, and complete
// with `items`, go to lease-next.ts.
import { claimRefusal, type LeaseEvent, leaseStateOf } from '../machines/lease-machine.ts';
import { invalid } from '../protocol/errors.ts';
import type { Caller } from './access.ts';
import { defaults } from './defaults.ts';
import {
  apply,
  checkProvenance,
  type CompleteItem,
  grant,
  heldLease,
  holderOf,
  iso,
  type LeaseBody,
  leaseActor,
  nextSeq,
  noted,
  parse,
  record,
  recordObservation,
  refusal,
  requireKnownSubject,
} from './lease-parts.ts';
import { completeCold, grantCold } from './lease-cold.ts';
import { checkItems, completeItems, withNext } from './lease-next.ts';
import { takeNext } from './lease-take.ts';
import type { Reply } from './reply.ts';
import { servedLease } from './served.ts';
import type { MonitorService } from './service.ts';
import type { SubscriptionHandle } from './subscription-handle.ts';

/** A named subject is required unless the call takes the next one (§21); the take-next fields need `next`. */
function namedSubject(body: LeaseBody, takeFields: readonly ('count' | 'wait')[] = []): string {
  for (const field of takeFields) {
    if (body[field] !== undefined) throw invalid(`"${field}" goes with "next": true (take the next subject); a claim of a named subject takes one.`, { field });
  }
  if (body.subject === undefined) {
    throw invalid('"subject" is required: the subject to act on (or, on claim, "next": true to take the oldest free subject).', { field: 'subject' });
  }
  return body.subject;
}

/** `client.signal` is read only by a take that waits (a transport may make the signal when asked). */
export function claim(service: MonitorService, input: unknown, caller: Caller, client?: { readonly signal?: AbortSignal }): Reply | Promise<Reply> {
  if (typeof input === 'object' && input !== null && (input as LeaseBody).next === true) return takeNext(service, input, caller, client);
  const { body, handle } = parse('lease-claim', service, input, caller, (b) => namedSubject(b, ['count', 'wait']));
  const subject = body.subject!;
  checkProvenance(handle, body);
  const cold = claimCold(service, handle, body, subject);
  if (cold) return cold;
  let actor = leaseActor(service, handle, subject, false);
  if (!actor) {
    requireKnownSubject(service, handle, subject);
    actor = leaseActor(service, handle, subject, true)!;
  }
  const holder = holderOf(handle);
  const now = service.now();
  const current = actor.getSnapshot();
  const refused = claimRefusal(leaseStateOf(current.value), current.context.lease, holder, now);
  if (refused) throw refusal(refused, subject);
  const result = grant(service, handle, actor, { holder, durationSeconds: body.lease_duration_seconds ?? defaults.leaseSeconds, now, onBehalfOf: body.on_behalf_of, note: body.note });
  if (result.effect !== 'claimed') service.confirmUnchanged(handle.feed.key);
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

/**
 * A named claim of a subject no actor holds, decided from its row by the machine's rules
 * (lease-cold.ts): refused when another holds it or it is dead-lettered, granted as a row when it
 * is free, completed or was never leased. Undefined when the actor must decide (the caller holds
 * the grant already, or it lapsed and its expiry is recorded first).
 */
function claimCold(service: MonitorService, handle: SubscriptionHandle, body: LeaseBody, subject: string): Reply | undefined {
  if (!service.leaseRows.changedAsRow(handle.feed.key, subject)) return undefined;
  const stored = service.leaseRows.stored(handle.feed.key, subject);
  const holder = holderOf(handle);
  const now = service.now();
  if (!stored) requireKnownSubject(service, handle, subject);
  else {
    const refused = claimRefusal(stored.state, stored.record, holder, now);
    if (refused) throw refusal(refused, subject);
    if (stored.state !== 'free' && stored.state !== 'completed') return undefined;
  }
  const durationSeconds = body.lease_duration_seconds ?? defaults.leaseSeconds;
  const result = grantCold(service, handle, subject, stored, { holder, durationSeconds, now, onBehalfOf: body.on_behalf_of, note: body.note });
  return {
    status: 201,
    body: { lease: servedLease(result.state, result.lease), expires: iso(result.lease.expiresMs), fence: result.lease.fence ?? null, idempotent: false },
  };
}

export function renewLease(service: MonitorService, input: unknown, caller: Caller): Reply {
  const { body, handle } = parse('lease-renew', service, input, caller);
  const subject = body.subject!;
  const actor = heldLease(service, handle, subject);
  const event: LeaseEvent = { type: 'RENEW', holder: holderOf(handle), fence: body.fence, now: service.now() };
  if (body.lease_duration_seconds !== undefined) event.durationSeconds = body.lease_duration_seconds;
  const result = apply(actor, event, subject);
  record(service, handle, result.lease, { action: 'renew', ...noted(body) });
  return {
    status: 200,
    body: { lease: servedLease(result.state, result.lease), expires: iso(result.lease.expiresMs), fence: result.lease.fence ?? null },
  };
}

/** Completes one named subject held by the caller (or repeats its completion); the reply body. */
function completeOne(service: MonitorService, handle: SubscriptionHandle, item: CompleteItem & { note?: string | null }, now = service.now()) {
  // A lease no actor holds (take-next's, as a rule) is completed as a row (lease-cold.ts).
  const cold = service.leaseRows.changedAsRow(handle.feed.key, item.subject);
  const event = { type: 'COMPLETE', holder: holderOf(handle), outcome: item.outcome, evidence: item.evidence, fence: item.fence, seq: nextSeq(handle), now } as const;
  const result = cold ? completeCold(service, handle, item, now) : apply(heldLease(service, handle, item.subject), event, item.subject);
  if (result.effect === 'completed') {
    handle.feed.stats.acted++;
    service.persistMonitor(handle.feed);
    const payload = { action: 'complete', outcome: item.outcome ?? null, evidence: item.evidence ?? [], ...noted(item) };
    if (cold) recordObservation(service, handle, result.lease, payload);
    else record(service, handle, result.lease, payload);
  } else {
    service.confirmUnchanged(handle.feed.key);
  }
  return { ok: true, seq: result.lease.completedSeq ?? null, lease: servedLease(result.state, result.lease) };
}

export function completeLease(service: MonitorService, input: unknown, caller: Caller): Reply | Promise<Reply> {
  const { body, handle } = parse('lease-complete', service, input, caller, (b) => (b.items !== undefined ? checkItems(b) : namedSubject(b)));
  const rerun = () => completeLease(service, input, caller);
  if (body.items !== undefined) return completeItems(service, rerun, handle, body, (item, now) => completeOne(service, handle, item, now));
  const subject = body.subject!;
  return withNext(service, rerun, handle, body, () => completeOne(service, handle, { ...body, subject }));
}

/** Release and reject: the lease becomes free (or dead-lettered on the last reject). */
function endLease(service: MonitorService, handle: SubscriptionHandle, body: LeaseBody, subject: string, kind: 'RELEASE' | 'REJECT') {
  const actor = heldLease(service, handle, subject);
  const result = apply(actor, { type: kind, holder: holderOf(handle), fence: body.fence, now: service.now() }, subject);
  const payload =
    kind === 'RELEASE'
      ? { action: 'release', reason: body.reason ?? null }
      : { action: 'reject', reason: body.reason ?? null, rejects: result.lease.rejects, dead_lettered: result.effect === 'dead_lettered' };
  const seq = record(service, handle, result.lease, payload);
  const lease = servedLease(result.state, result.lease);
  return { ok: true, seq, dead_letter: lease.dead_letter, lease };
}

export function releaseLease(service: MonitorService, input: unknown, caller: Caller): Reply | Promise<Reply> {
  const { body, handle } = parse('lease-release', service, input, caller, (b) => namedSubject(b));
  const subject = body.subject!;
  return withNext(service, () => releaseLease(service, input, caller), handle, body, () => endLease(service, handle, body, subject, 'RELEASE'));
}

export function rejectLease(service: MonitorService, input: unknown, caller: Caller): Reply | Promise<Reply> {
  const { body, handle } = parse('lease-release', service, input, caller, (b) => namedSubject(b));
  const subject = body.subject!;
  return withNext(service, () => rejectLease(service, input, caller), handle, body, () => endLease(service, handle, body, subject, 'REJECT'));
}
