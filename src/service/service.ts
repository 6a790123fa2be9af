// The one service API every door (HTTP, JSON-RPC, SSE, MCP) calls. It owns
// the in-memory feeds and the actor system, appends observations, and makes
// every change durable through the store's group commit before a reply.
import { type Clock, systemClock } from '../actors/clock.ts';
import { RootSystem } from '../actors/root-system.ts';
import { isClusterConflict } from '../store/cluster-conflict.ts';
import { ProtocolError } from '../protocol/errors.ts';
import type { SubscriptionRow } from '../store/records.ts';
import { memoryPath, type Store } from '../store/store.ts';
import type { ServiceOptions, SourceHooks } from './service-options.ts';
import { ClientLimits, defaultClientLimits } from './client-limits.ts';
import { defaults } from './defaults.ts';
import type { ClusterNodeHooks } from './cluster-hooks.ts';
import { Listeners } from '../events/listeners.ts';
import { CommitNotices } from './commit-notices.ts';
import type { ServiceListener } from './service-listener.ts';
import { Feed } from './feed.ts';
import { type ReloadedMonitor, reloadMonitor } from './monitor-reload.ts';
import { ObservationWriter } from './observation-writer.ts';
import { StreamTicker, tickPeriodMs } from './stream-ticker.ts';
import { LeaseRows } from './lease-rows.ts';
import { SubscriptionRows } from './subscription-rows.ts';
import { TakeQueues } from './take-queues.ts';
import { SubscriptionWatchers } from './subscription-watchers.ts';
import { leaseExpired, subscriptionMuted } from './timer-transitions.ts';

export type { ClusterNodeHooks } from './cluster-hooks.ts';
export type { ObservationKind, ServiceOptions, SourceHooks } from './service-options.ts';

export class MonitorService {
  readonly store: Store;
  readonly clock: Clock;
  readonly system: RootSystem;
  readonly options: Required<Pick<ServiceOptions, 'retireAfterMuteSeconds' | 'maxBodyBytes' | 'heartbeatMs'>> &
    Pick<ServiceOptions, 'registrationToken' | 'adminToken'>;
  private readonly feeds = new Map<string, Feed>();
  private readonly feedsByKey = new Map<number, Feed>();
  private readonly listeners = new Listeners<ServiceListener>();
  private readonly notices = new CommitNotices(this.listeners);
  /** Appends observations: producers' items, the server's bookkeeping, refusals. */
  readonly observations: ObservationWriter;
  /** (monitor key, subscriber) → subscription id: one subscription per subscriber and monitor. */
  private readonly subscriberIds = new Map<string, string>();
  readonly log: (line: string) => void;
  /** Open event streams by subscription id, told when the subscription changes. */
  readonly watchers = new SubscriptionWatchers();
  /** Every subscription row read and written; each change tells the subscription's open streams. */
  readonly subscriptionRows: SubscriptionRows;
  /** Every lease row read and written; each change tells take-next's lines of its monitor. */
  readonly leaseRows: LeaseRows;
  readonly clientLimits: ClientLimits;
  /** The heartbeats and activity of every open event stream, on one timer. */
  readonly streamTicker: StreamTicker;
  private nextMonitorKey = 1;
  private closed = false;
  private draining = false;
  private sourceHooks: SourceHooks | undefined;
  /** Take-next's lines of subjects (protocol.md §21), told of every lease change. */
  readonly queues: TakeQueues;
  private clusterHooks: ClusterNodeHooks | undefined;
  /** Keys handed out by the cluster's database, used before local ones. */
  private readonly reservedMonitorKeys: number[] = [];

  constructor(options: ServiceOptions) {
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.options = {
      retireAfterMuteSeconds: options.retireAfterMuteSeconds ?? defaults.retireAfterMuteSeconds,
      maxBodyBytes: options.maxBodyBytes ?? defaults.maxBodyBytes,
      heartbeatMs: options.heartbeatMs ?? defaults.heartbeatMs,
      registrationToken: options.registrationToken,
      adminToken: options.adminToken,
    };
    this.observations = new ObservationWriter(this.store, this.clock, this.notices, this.listeners);
    this.streamTicker = new StreamTicker(this.clock, tickPeriodMs(this.options.heartbeatMs));
    this.clientLimits = new ClientLimits({ ...defaultClientLimits, ...options.clientLimits }, () => this.now());
    this.system = new RootSystem({
      clock: this.clock,
      rejectLimit: defaults.deliveryCountLimit,
      loadSubscription: (id) => this.subscriptionRows.load(id),
      loadLease: (key) => this.leaseRows.load(key),
      leaseExpired: (lease) => leaseExpired(this, lease),
      subscriptionMuted: (subscription) => subscriptionMuted(this, subscription),
      inspect: options.inspect,
      timersRunHere: options.timersRunHere,
      actorFailed: (kind, key, error) => this.log(`vigil: ${kind} actor ${key} failed and will be restored from the store: ${String(error)}`),
    }, options.residentActors);
    this.queues = new TakeQueues(
      {
        subjectsAfter: (mkey, after, upTo, filters, limit) => this.store.queue.subjectsAfter(mkey, after, upTo, filters, limit),
        standing: (mkey, subject, stored) => this.leaseRows.standing(mkey, subject, stored),
        firstMatch: (mkey, subject, from, to, filters) => this.store.queue.firstMatch(mkey, subject, from, to, filters),
      },
      () => this.now(),
    );
    // Leases no actor holds are changed on their rows (lease-cold.ts), except under --inspect.
    this.leaseRows = new LeaseRows(this.store, this.system, () => this.queues, options.inspect === undefined);
    this.subscriptionRows = new SubscriptionRows(this.store, this.system, this.watchers, () => this.now());
    this.store.commits.on('committed', (heads) => (heads ? this.afterClusterCommit(heads) : this.afterCommit()));
    this.store.commits.on('failed', (error) =>
      this.log(
        `vigil: cannot write the state file ${this.store.path} (${error instanceof Error ? error.message : String(error)}); nothing more is stored and requests are refused with 503 STORE_UNAVAILABLE until the server is restarted`,
      ),
    );
    try {
      this.load();
    } catch (error) {
      // A damaged page shows up only when it is read; SQLite's message does not say which file.
      if (this.store.path === memoryPath) throw error;
      throw new Error(`cannot load the state file ${this.store.path}: ${(error as Error).message}`, { cause: error });
    }
  }

  // ---- loading ----

  private load(): void {
    for (const row of this.store.monitors()) {
      const actor = this.system.addMonitor(row.status, row.definition);
      const feed = new Feed(row.key, actor, row.ownerTokenHash, row.subscribeTokenHash, row.stats);
      this.register(feed);
      this.nextMonitorKey = Math.max(this.nextMonitorKey, row.key + 1);
    }
    for (const c of this.store.contradictions()) this.feedsByKey.get(c.mkey)?.openContradictions.set(c.seq, c.subject);
    for (const { id, mkey, subscriber } of this.store.subscribers()) this.subscriberIds.set(subscriberKey(mkey, subscriber), id);
    for (const [mkey, live] of this.store.liveSubscriptionCounts()) {
      const feed = this.feedsByKey.get(mkey);
      if (feed) feed.liveSubscriptions = live;
    }
    // Timers resume from stored deadlines; the actors themselves stay on disk until due or used.
    for (const { id, deadlineMs } of this.store.muteDeadlines()) this.system.wakeSubscriptionAt(id, deadlineMs);
    this.leaseRows.wakeStoredDeadlines();
  }

  private register(feed: Feed): void {
    this.feeds.set(feed.id, feed);
    this.feedsByKey.set(feed.key, feed);
  }

  // ---- feeds ----

  now(): number {
    return this.clock.now();
  }

  feed(id: string): Feed | undefined {
    return this.feeds.get(id);
  }

  feedByKey(key: number): Feed | undefined {
    return this.feedsByKey.get(key);
  }

  allFeeds(): IterableIterator<Feed> {
    return this.feeds.values();
  }

  subscriptionIdOf(mkey: number, subscriber: string): string | undefined {
    return this.subscriberIds.get(subscriberKey(mkey, subscriber));
  }

  addSubscription(row: SubscriptionRow): void {
    const id = row.record.id;
    this.subscriberIds.set(subscriberKey(row.record.mkey, row.record.subscriber), id);
    this.subscriptionRows.add(row);
  }

  /** The live sources, when the server runs them. */
  get sources(): SourceHooks | undefined {
    return this.sourceHooks;
  }

  /** The live sources hook in (src/sources/manager.ts). */
  attachSources(hooks: SourceHooks): void {
    this.sourceHooks = hooks;
  }

  /** The cluster node, when this server is one node of a cluster on PostgreSQL. */
  get cluster(): ClusterNodeHooks | undefined {
    return this.clusterHooks;
  }

  /** The cluster node hooks in (src/cluster/cluster-node.ts). */
  joinCluster(hooks: ClusterNodeHooks): void {
    this.clusterHooks = hooks;
  }

  /** Whether a key the cluster's database handed out is waiting for the next new monitor. */
  get hasReservedMonitorKey(): boolean {
    return this.reservedMonitorKeys.length > 0;
  }

  /** A key the cluster's database handed out, used by the next new monitor before local keys. */
  reserveMonitorKey(key: number): void {
    this.reservedMonitorKeys.push(key);
  }

  allocateMonitorKey(): number {
    return this.reservedMonitorKeys.shift() ?? this.nextMonitorKey++;
  }

  /** Drops a monitor whose creation the database refused (a cluster node lost the race for its id). */
  forgetMonitor(mkey: number): void {
    const feed = this.feedsByKey.get(mkey);
    if (!feed) return;
    this.feedsByKey.delete(mkey);
    if (this.feeds.get(feed.id) === feed) {
      this.feeds.delete(feed.id);
      this.system.monitors.evict(feed.id);
    }
    this.queues.forget(mkey);
  }

  /** Replaces what memory holds of a monitor by its stored rows (a cluster node catching up), and wakes its readers. */
  reloadMonitor(update: ReloadedMonitor): Feed {
    const feed = reloadMonitor(this, {
      register: (f) => this.register(f),
      setSubscriber: (mkey, subscriber, id) => this.subscriberIds.set(subscriberKey(mkey, subscriber), id),
    }, update);
    // Rows written since the last commit are committed, or in a batch the reload just refused: the database's stand.
    this.subscriptionRows.forgetMonitor(feed.key);
    this.leaseRows.forgetMonitor(feed.key);
    if (update.changed === 'all') {
      for (const follower of feed.followers) follower.subscriptionsReloaded();
    } else {
      for (const s of update.changed.subscriptions) this.watchers.changed(s.id);
    }
    this.queues.reloaded(feed.key, update.leaseRows ?? [], update.changed === 'all');
    this.notices.readableUpTo(feed, feed.stats.head);
    return feed;
  }

  addFeed(feed: Feed): void {
    this.register(feed);
    this.persistMonitor(feed);
  }

  // ---- persistence of actor state (read when the batch commits) ----

  persistMonitor(feed: Feed): void {
    this.store.putMonitor(() => feed.row());
  }

  /**
   * A reply read from memory that writes nothing (an idempotent lease re-claim or complete): on a
   * cluster node it stands only once PostgreSQL confirms, with the batch, that the monitor is still
   * at the rev memory holds; otherwise the operation runs again on the reloaded state.
   */
  confirmUnchanged(mkey: number): void {
    if (this.cluster) this.store.confirm(mkey);
  }

  /**
   * A timer's write (a lease expiry, a mute retirement) made while this cluster node owns the
   * monitor's timers: PostgreSQL refuses it once another node took them over (src/cluster/ownership.ts).
   * A node that does not own them (an expiry found on restoring a lease for a request) is checked by rev alone.
   */
  fenceOwnedWrite(mkey: number): void {
    const token = this.cluster?.ownerToken(mkey);
    if (token !== undefined) this.store.fence(mkey, token);
  }

  // ---- commits ----

  private afterCommit(): void {
    this.subscriptionRows.committed();
    this.leaseRows.committed();
    // Nothing is pending right now, so cold actors can go without losing a write.
    this.system.trim();
    this.notices.committedAll();
  }

  /** A cluster node's batch committed; actors are trimmed only when nothing is queued behind it. */
  private afterClusterCommit(heads: ReadonlyMap<number, number>): void {
    const nothingQueued = !this.store.commits.hasPending;
    if (nothingQueued) {
      this.subscriptionRows.committed();
      this.leaseRows.committed();
      this.system.trim();
    }
    this.notices.committedHeads(heads, (mkey) => this.feedsByKey.get(mkey), nothingQueued);
  }

  /** Someone follows every monitor's commits live (a dashboard, an MCP resource subscription); event streams follow their own monitor (Feed.followers). */
  get hasRecordedListeners(): boolean {
    return this.listeners.has('recorded');
  }

  /** Calls `listener` on each `event` (service-listener.ts); returns the function that stops it. */
  on<E extends keyof ServiceListener>(event: E, listener: ServiceListener[E]): () => void {
    return this.listeners.on(event, listener);
  }

  off<E extends keyof ServiceListener>(event: E, listener: ServiceListener[E]): void {
    this.listeners.off(event, listener);
  }

  /** Resolves once every change made so far is durable; refuses with 503 when the store cannot write. */
  async settle(): Promise<void> {
    try {
      await this.store.settled();
    } catch (error) {
      if (isClusterConflict(error)) throw error;
      if (this.cluster) {
        // A connection lost during COMMIT leaves the outcome unknown: the reply must not claim either.
        throw new ProtocolError('STORE_UNAVAILABLE', `PostgreSQL did not confirm the change (${(error as Error).message}); it may not have been stored. Try again shortly.`, {}, { cause: error });
      }
      throw new ProtocolError(
        'STORE_UNAVAILABLE',
        `The state file cannot be written (${(error as Error).message}); the change was not stored. Free disk space or fix the file's permissions, then restart the server.`,
        {},
        { cause: error },
      );
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.streamTicker.stop();
    this.system.stop();
    for (const feed of this.feeds.values()) {
      for (const waiter of feed.waiters) waiter();
      feed.waiters.clear();
    }
    this.store.close();
  }

  /** The server is stopping: waiting reads answer with what they have now instead of waiting on. */
  drain(): void {
    this.draining = true;
    for (const feed of this.feeds.values()) {
      for (const waiter of feed.waiters) waiter();
      feed.waiters.clear();
    }
  }

  get isDraining(): boolean {
    return this.draining || this.closed;
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

const subscriberKey = (mkey: number, subscriber: string) => `${mkey}\u0000${subscriber}`;
