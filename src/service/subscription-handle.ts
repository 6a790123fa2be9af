// A subscription as an operation finds it: its actor, monitor and record,
// found by the caller's token, and what reads of it share (§9, §10, §17).
import type { SubscriptionActor } from '../actors/root-system.ts';
import { subscriptionStateOf } from '../machines/subscription-machine.ts';
import { ProtocolError, notFound, unauthorized } from '../protocol/errors.ts';
import { type Filter, isEmptyFilter } from '../protocol/filter.ts';
import type { SubscriptionRecord } from '../store/records.ts';
import type { Caller } from './access.ts';
import type { Feed } from './feed.ts';
import type { MonitorService } from './service.ts';
import { tokenMatches } from './tokens.ts';

export interface SubscriptionHandle {
  readonly id: string;
  readonly actor: SubscriptionActor;
  readonly feed: Feed;
  readonly record: SubscriptionRecord;
  readonly live: boolean;
}

/** The subscription named by `id`, when the caller holds its token. */
export function subscriptionFor(service: MonitorService, id: string, caller: Caller): SubscriptionHandle {
  const actor = service.system.subscriptions.get(id);
  if (!actor) throw notFound(`No subscription "${id}".`);
  const snapshot = actor.getSnapshot();
  const record = snapshot.context.subscription;
  if (!tokenMatches(caller.bearer, record.tokenHash)) {
    throw unauthorized(`Subscription "${id}" needs its subscription token (returned once by subscribe, replaced by renew).`);
  }
  const feed = service.feedByKey(record.mkey);
  if (!feed) throw notFound(`The monitor of subscription "${id}" no longer exists.`);
  return { id, actor, feed, record, live: subscriptionStateOf(snapshot.value) === 'live' };
}

/** A retired subscription's token finds nothing to act on: 404 with the kept cursor (§17). */
export function requireLive(handle: SubscriptionHandle): void {
  if (!handle.live) {
    throw notFound(`Subscription "${handle.id}" is retired; subscribe again with the same subscriber to reactivate it (its cursor ${handle.record.cursor} was kept).`, {
      retired: true,
      cursor: handle.record.cursor,
    });
  }
}

/** 410 for a cursor below the retention floor, with where to rebuild from (§10, §17). */
export function cursorExpired(feed: Feed, requested: number): ProtocolError {
  const floor = feed.stats.retention_floor;
  return new ProtocolError('CURSOR_EXPIRED', `Cursor ${requested} is below the retention floor ${floor}: those observations were compacted. Rebuild from the state document, then continue from ${floor}.`, {
    retention_floor: floor,
    relist: `monitors/state?id=${feed.id}`,
    requested,
  });
}

/**
 * Where a read from the committed cursor starts when compaction left that
 * cursor below the retention floor (§9 reset_policy): `earliest` moves the
 * cursor to the floor, `latest` to head + 1, and `none` (the default) answers
 * 410 CURSOR_EXPIRED. A cursor the client named (a replay, `Last-Event-ID`)
 * is never moved: below the floor it is always 410.
 */
export function startAfterReset(service: MonitorService, handle: SubscriptionHandle, start: number, named: boolean): number {
  const { feed, record } = handle;
  const floor = feed.stats.retention_floor;
  if (floor === 0 || start >= floor) return start;
  if (named || record.reset_policy === 'none') throw cursorExpired(feed, start);
  const moved = record.reset_policy === 'earliest' ? floor : feed.committedHead + 1;
  handle.actor.send({ type: 'SEEK', cursor: moved, head: feed.committedHead, now: service.now() });
  service.subscriptionRows.persist(handle.id);
  return moved;
}

/** Filters that apply to every read of a subscription: the monitor's own and the subscription's. */
export function standingFilters(feed: Feed, record: SubscriptionRecord): Filter[] {
  return [feed.ownFilter(), record.filter].filter((f) => !isEmptyFilter(f));
}

/** Exact number of matching observations from the committed cursor to head (never from the start of the log). */
export function lagOf(service: MonitorService, feed: Feed, record: SubscriptionRecord): number {
  const from = Math.max(record.cursor, feed.stats.retention_floor, 1);
  const head = feed.committedHead;
  if (from > head) return 0;
  const filters = standingFilters(feed, record);
  if (filters.length === 0) return head - from + 1;
  return service.store.countFeed(feed.key, from, head, filters);
}
