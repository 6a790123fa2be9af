// What the server records when an actor's timer fires: a lease that lapsed
// without a complete or release, a subscription retired after its mute.
import { serverPrincipal } from '../protocol/principal.ts';
import { observationTypes } from '../protocol/vocabulary.ts';
import type { LeaseRecord, SubscriptionRecord } from '../store/records.ts';
import type { Feed } from './feed.ts';
import type { LeaseRows } from './lease-rows.ts';
import type { ObservationWriter } from './observation-writer.ts';
import type { SubscriptionRows } from './subscription-rows.ts';

/** What the transitions need of the service (MonitorService is one), so that this file does not import it back. */
export interface TimerTransitionHost {
  feedByKey(key: number): Feed | undefined;
  readonly observations: Pick<ObservationWriter, 'recordBookkeeping'>;
  /** Stores a lease's change; `freed`: the lease is free again (take-next's lines put it back in line). */
  readonly leaseRows: Pick<LeaseRows, 'persist' | 'freed'>;
  readonly subscriptionRows: Pick<SubscriptionRows, 'persist'>;
  /** On a cluster node that owns the monitor's timers: the write that follows stands only while it still does. */
  fenceOwnedWrite(mkey: number): void;
}

export function leaseExpired(service: TimerTransitionHost, lease: LeaseRecord): void {
  const feed = service.feedByKey(lease.mkey);
  if (!feed) return;
  service.fenceOwnedWrite(lease.mkey);
  const expires = lease.expiresMs === null ? null : new Date(lease.expiresMs).toISOString();
  service.observations.recordBookkeeping(
    feed,
    observationTypes.lease,
    serverPrincipal,
    { action: 'expired', holder: lease.holder, subject: lease.subject, expires, fence: lease.fence ?? null },
    lease.subject,
  );
  service.leaseRows.persist(lease.mkey, lease.subject);
  service.leaseRows.freed(lease);
}

export function subscriptionMuted(service: TimerTransitionHost, subscription: SubscriptionRecord): void {
  const feed = service.feedByKey(subscription.mkey);
  if (!feed) return;
  service.fenceOwnedWrite(subscription.mkey);
  feed.liveSubscriptions = Math.max(0, feed.liveSubscriptions - 1);
  service.observations.recordBookkeeping(feed, observationTypes.subscriptionRetired, serverPrincipal, {
    subscription: subscription.id,
    subscriber: subscription.subscriber,
    reason: 'mute',
    cursor: subscription.cursor,
  });
  service.subscriptionRows.persist(subscription.id);
}
