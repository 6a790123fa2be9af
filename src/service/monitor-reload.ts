// Replaces what memory holds of one monitor by its stored rows: used by a
// cluster node when the database moved on (another node wrote) or when a
// batch of this node was refused. The rows are already in the local store;
// actors that changed are dropped and come back from their rows on next use.
import type { RootSystem } from '../actors/root-system.ts';
import type { MonitorRow } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { Feed } from './feed.ts';
import type { StoredLeaseRow } from './take-queues.ts';

/** What a reload needs of the service (MonitorService is one), so that this file does not import it back. */
export interface ReloadHost {
  feedByKey(key: number): Feed | undefined;
  readonly system: RootSystem;
  readonly store: Pick<Store, 'subscribers' | 'liveSubscriptionCounts'>;
}

export interface ReloadedMonitor {
  readonly row: MonitorRow;
  readonly contradictions: ReadonlyArray<{ seq: number; subject: string | null }>;
  /** Subscriptions and leases whose rows changed ("all": every one of this monitor, e.g. after a refused batch). */
  readonly changed: { subscriptions: ReadonlyArray<{ id: string; subscriber: string }>; leases: readonly string[] } | 'all';
  /** The lease rows the database changed since memory's rev (take-next's lines hear of them). */
  readonly leaseRows?: readonly StoredLeaseRow[];
}

export interface ReloadAccess {
  register(feed: Feed): void;
  setSubscriber(mkey: number, subscriber: string, id: string): void;
}

export function reloadMonitor(service: ReloadHost, access: ReloadAccess, update: ReloadedMonitor): Feed {
  const { row } = update;
  let feed = service.feedByKey(row.key);
  const system = service.system;
  if (!feed) {
    feed = new Feed(row.key, system.addMonitor(row.status, row.definition), row.ownerTokenHash, row.subscribeTokenHash, row.stats);
    access.register(feed);
  } else {
    if (feed.status !== row.status || feed.definition.version !== row.definition.version || feed.definition.updated !== row.definition.updated) {
      system.monitors.evict(row.definition.id);
      feed.actor = system.addMonitor(row.status, row.definition);
    }
    feed.ownerTokenHash = row.ownerTokenHash;
    feed.subscribeTokenHash = row.subscribeTokenHash;
    const stats = feed.stats as unknown as Record<string, unknown>;
    for (const key of Object.keys(stats)) delete stats[key];
    Object.assign(stats, row.stats);
  }
  feed.forgetStoredSubjects();
  feed.openContradictions.clear();
  for (const c of update.contradictions) feed.openContradictions.set(c.seq, c.subject);
  if (update.changed === 'all') {
    evictActorsOf(system, row.key);
    for (const s of service.store.subscribers()) if (s.mkey === row.key) access.setSubscriber(s.mkey, s.subscriber, s.id);
  } else {
    for (const s of update.changed.subscriptions) {
      system.subscriptions.evict(s.id);
      access.setSubscriber(row.key, s.subscriber, s.id);
    }
    for (const key of update.changed.leases) system.leases.evict(key);
  }
  feed.liveSubscriptions = service.store.liveSubscriptionCounts().get(row.key) ?? 0;
  return feed;
}

/** Drops the monitor's resident subscription and lease actors: they come back from their rows on next use. */
export function evictActorsOf(system: RootSystem, mkey: number): void {
  for (const [id, actor] of [...system.subscriptions.entries()]) {
    if (actor.getSnapshot().context.subscription.mkey === mkey) system.subscriptions.evict(id);
  }
  const prefix = `${mkey}:`;
  for (const key of [...system.leases.keys()]) if (key.startsWith(prefix)) system.leases.evict(key);
}
