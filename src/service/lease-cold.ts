// Take-next's grants and their completions on leases that no actor holds
// (protocol.md §21). A subject take-next hands out has, nearly always, never
// been leased, and is completed by the same slot shortly after: building a
// lease actor for it (and stopping it again at the next trim) was most of a
// cycle's CPU. Such a lease stays a row: the change is the machine's own rule
// (acquiredLease, completedLease, completeRefusal in lease-machine.ts), its
// expiry the deadline scheduler's (an actor is made from the row if the
// deadline comes: the machine then expires it as any restored lease), and
// every other call on it (renew, release, reject) makes the actor from the row
// as for any lease not resident. A named claim of a subject no actor holds is
// granted as a row too when the row is free or completed (or there is none),
// and refused from the row when another holds it; a claim of the caller's own
// grant, or of one that lapsed (whose expiry is recorded first), goes to the actor.
import { acquiredLease, completedLease, completeRefusal } from '../machines/lease-machine.ts';
import { type Applied, type CompleteItem, emptyLease, holderOf, nextSeq, noted, recordObservation, refusal, requireKnownSubject } from './lease-parts.ts';
import type { LeaseRow } from '../store/records.ts';
import type { MonitorService } from './service.ts';
import type { SubscriptionHandle } from './subscription-handle.ts';

/**
 * Grants `stored` (free or completed, or never leased when undefined) to the caller, without an
 * actor: CLAIM takes both states to held by the same action. `queued` is take-next's place of the
 * subject; a named claim sends none and the lease keeps the one it had.
 */
export function grantCold(
  service: MonitorService,
  handle: SubscriptionHandle,
  subject: string,
  stored: LeaseRow | undefined,
  request: { holder: string; durationSeconds: number; now: number; onBehalfOf?: string; queued?: number; note?: string | null },
): Applied {
  const before = stored?.record ?? emptyLease(handle, subject);
  const lease = acquiredLease(before, { type: 'CLAIM', holder: request.holder, durationSeconds: request.durationSeconds, fence: nextSeq(handle), now: request.now, queued: request.queued });
  service.leaseRows.putCold({ state: 'held', record: lease });
  recordObservation(service, handle, lease, { action: 'claim', on_behalf_of: request.onBehalfOf ?? null, ...noted(request) });
  return { effect: 'claimed', lease, state: 'held' };
}

/** Completes a lease that is only a row, by the machine's rule; throws its refusal as the actor would. */
export function completeCold(service: MonitorService, handle: SubscriptionHandle, item: CompleteItem, now: number): Applied {
  const stored = service.leaseRows.stored(handle.feed.key, item.subject);
  if (!stored) {
    requireKnownSubject(service, handle, item.subject);
    throw refusal({ ok: false, code: 'LEASE_LOST', holder: null, expiresMs: null, fence: null }, item.subject);
  }
  const holder = holderOf(handle);
  const refused = completeRefusal(stored.state, stored.record, holder, item.fence, now);
  if (refused) throw refusal(refused, item.subject, item.fence);
  if (stored.state === 'completed') return { effect: 'recompleted', lease: stored.record, state: 'completed' };
  const lease = completedLease(stored.record, { type: 'COMPLETE', holder, outcome: item.outcome, evidence: item.evidence, fence: item.fence, seq: nextSeq(handle), now });
  service.leaseRows.putCold({ state: 'completed', record: lease });
  return { effect: 'completed', lease, state: 'completed' };
}
