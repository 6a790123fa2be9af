// One `vigil serve` node of a cluster on PostgreSQL (protocol.md §20). The
// database is the authority; the node's service runs on a local SQLite
// replica that is caught up on a monitor before every operation on it, and
// every batch it writes is checked in PostgreSQL against the monitor's
// change counter (src/store/postgres/pg-store.ts). A lost race reloads the
// monitor and runs the operation again. Wakes come by LISTEN/NOTIFY; a
// monitor's timers are armed by the holder of its ownership lease (ownership.ts),
// whose timer and source writes are fenced by the lease's token.
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProtocolError } from '../protocol/errors.ts';
import { defaults } from '../service/defaults.ts';
import type { MonitorService, ClusterNodeHooks } from '../service/service.ts';
import type { FeedStats, MonitorDefinition, MonitorStatus } from '../store/records.ts';
import type { CapturedBatch } from '../store/postgres/captured-batch.ts';
import { isStoreFailure, type PgConnection, openPostgres } from '../store/postgres/pg-connection.ts';
import { type MonitorDelta, PgStore } from '../store/postgres/pg-store.ts';
import type { SqlDriver } from '../store/sql-driver.ts';
import type { Store } from '../store/store.ts';
import { ClusterCommit } from './cluster-commit.ts';
import { FencedOffError, isClusterConflict } from '../store/cluster-conflict.ts';
import { ChangeListener } from './change-listener.ts';
import { Heartbeat, type NodeInfo } from './heartbeat.ts';
import { Ownership } from './ownership.ts';
import { LookupBatch } from './lookup-batch.ts';
import { ReplicaWriter } from './replica-writer.ts';
import { ReplicaFile } from './replica-file.ts';
import { dropFromReplica, ReplicaBudget } from './replica-budget.ts';
import { readDeltaInPages } from './replica-pages.ts';
import { evictActorsOf } from '../service/monitor-reload.ts';
import { storeUnavailable } from './store-unavailable.ts';

const maxAttempts = 50;
/** Reads before a request's change, each on a new session when the database ended the last one. */
const readAttempts = 3;
/** Pages of the replica held in memory. */
const replicaCacheKiB = 16 * 1024;
// delta: what changed since the known rev; reload: everything, from inside the batch that was refused;
// refresh: everything, for a monitor whose memory may be ahead of the database; takeover: arm the timers.
type SyncMode = 'delta' | 'reload' | 'refresh' | 'takeover';

export class ClusterNode implements ClusterNodeHooks {
  readonly node: { id: string; readonly store: 'postgres' };
  readonly pg: PgStore;
  private service!: MonitorService;
  private replica!: ReplicaWriter;
  private queue!: ClusterCommit;
  /** The rev of each monitor that memory and the local replica hold. */
  private readonly known = new Map<number, number>();
  /** Set once the server stops: other nodes' changes are no longer caught up on. */
  private stopping = false;
  private readonly subscriptionMonitors = new Map<string, number>();
  private readonly syncing = new Map<number, Promise<void>>();
  /** Monitors whose memory may hold a refused batch's changes: reloaded whole before their next use. */
  private readonly stale = new Set<number>();
  private listener: ChangeListener | undefined;
  private readonly revByKey = new LookupBatch<number, number>((keys) => this.pg.revsByKey(keys));
  private readonly revById = new LookupBatch<string, { key: number; rev: number }>((ids) => this.pg.revsById(ids));
  private ownership: Ownership | undefined;
  private heartbeat: Heartbeat | undefined;
  /** The replica's private file (Store.open's path and `scratch`). */
  readonly replicaFile = new ReplicaFile();
  readonly replicaStore = { cacheKiB: replicaCacheKiB };
  private budget: ReplicaBudget | undefined;

  private constructor(
    readonly connection: PgConnection,
    private readonly log: (line: string) => void,
    private readonly replicaBudgetMB: number,
  ) {
    this.node = { id: '', store: 'postgres' };
    this.pg = new PgStore(connection);
  }

  static async open(url: string, log: (line: string) => void, replicaBudgetMB: number = defaults.replicaBudgetMB): Promise<ClusterNode> {
    return new ClusterNode(await openPostgres(url), log, replicaBudgetMB);
  }

  /** The store's commit queue (passed to Store.open before the service exists). */
  readonly commitQueue = (driver: SqlDriver, store: Store): ClusterCommit => {
    this.queue = new ClusterCommit(driver, store, { commit: (batch) => this.commit(batch), reload: (mkeys) => this.reload(mkeys), log: this.log });
    return this.queue;
  };

  async attach(service: MonitorService): Promise<void> {
    this.service = service;
    this.replica = new ReplicaWriter(service.store.driver);
    service.cluster = this;
    const replica = this.replica;
    this.budget = new ReplicaBudget(
      { usedBytes: () => replica.usedBytes(), drop: (mkey) => this.dropCold(mkey), log: this.log },
      { budgetBytes: this.replicaBudgetMB * (1 << 20), coldMs: 5000, checkMs: 2000 },
    );
    this.listener = await ChangeListener.start(this.connection, (mkey, rev, timers) => this.changed(mkey, rev, timers), () => this.resyncKnown(), this.log);
    this.ownership = await Ownership.start(this.connection, {
      acquired: (mkey) => this.sync(mkey, 'takeover'),
      // Every lease lapsed: stop the sources; whoever takes the monitors starts them.
      released: () => {
        for (const feed of this.service.allFeeds()) this.service.sources?.changed(feed);
      },
      // Before the node has its id and the live list (identify), it takes what it can, as the first node up does.
      nodeId: () => this.node.id,
      assigned: (mkey, holders) => !this.heartbeat || this.heartbeat.assignee(mkey, holders) === this.node.id,
      // Its source stops here; the node that takes the monitor starts it.
      handedBack: (mkey) => {
        const feed = this.service.feedByKey(mkey);
        if (feed) this.service.sources?.changed(feed);
      },
      handingBack: (mkey, pollWithinMs) => {
        const feed = this.service.feedByKey(mkey);
        if (feed) this.service.sources?.handBack(feed, pollWithinMs);
      },
      drained: (mkey) => this.service.sources?.drained(mkey) ?? Promise.resolve(),
      log: this.log,
    });
  }

  /**
   * Names this node once it listens and starts its heartbeat. The id is `--node-id` when given, else
   * derived from the host name and the port, so a node restarted on its port keeps its id.
   */
  async identify(url: string, port: number, id?: string): Promise<void> {
    this.node.id = id ?? `node-${createHash('sha256').update(`${hostname()}:${port}`).digest('hex').slice(0, 12)}`;
    this.heartbeat = new Heartbeat(this.connection, { id: this.node.id, url }, this.log);
    await this.heartbeat.start();
  }

  /** The nodes alive now (heartbeats within the last few seconds), this one first. */
  liveNodes(): readonly NodeInfo[] {
    return this.heartbeat?.live() ?? [{ id: this.node.id, url: '' }];
  }

  /** How many monitors' timers and sources run on this node. */
  get timerMonitors(): number {
    return this.ownership?.ownedCount ?? 0;
  }

  /** The database (shown redacted). */
  get storeUrl(): string {
    return this.connection.url;
  }

  /** Timers of a monitor run on the node holding its ownership lease. */
  runsTimersOf(mkey: number): boolean {
    return this.ownership?.owns(mkey) ?? false;
  }

  /** The token this node owns the monitor's timers under (undefined: it does not own them now). */
  ownerToken(mkey: number): number | undefined {
    return this.ownership?.tokenOf(mkey);
  }

  /** Runs one operation on fresh state; a batch that lost a race runs again. */
  async run<T>(operation: string, input: unknown, attempt: () => Promise<T>): Promise<T> {
    for (let tries = 1, lostSessions = 0; ; tries++) {
      try {
        await this.refreshFor(operation, input);
        // No await between the reservation and the attempt: a concurrent create would take the key.
        if (operation === 'monitors/create' && this.service.reservedMonitorKeys.length === 0) {
          this.service.reservedMonitorKeys.push(await this.pg.nextMonitorKey());
        }
      } catch (error) {
        // Only reads ran: a session the database ended (the pool drops it) is worth another on a new one.
        if (isStoreFailure(error) && ++lostSessions < readAttempts) {
          await sleep(100 * lostSessions);
          continue;
        }
        throw storeUnavailable(error, this.connection.url, this.log);
      }
      try {
        return await attempt();
      } catch (error) {
        await this.afterLostRace(error, tries);
      }
    }
  }

  /**
   * A write the server makes on its own (a live source's observation): run like a request, on the
   * monitor's fresh state and again after a lost race. Resolves undefined once stored, or the error
   * that kept it out after a request's retries; the writer keeps it and decides when to try again.
   */
  async writeOn(mkey: number, attempt: () => Promise<void>): Promise<Error | undefined> {
    try {
      for (let tries = 1; ; tries++) {
        await this.catchUpOn(mkey);
        // The source runs here because this node owns the monitor: its writes stand only under that token.
        const token = this.ownerToken(mkey);
        if (token === undefined) return new Error('this node no longer runs the source: another node owns the monitor now');
        this.service.store.fence(mkey, token);
        try {
          await attempt();
          return undefined;
        } catch (error) {
          await this.afterLostRace(error, tries);
        }
      }
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  /** Rethrows what is not a lost race, and a lost race past the bound; otherwise waits a little before the next attempt. */
  private async afterLostRace(error: unknown, tries: number): Promise<void> {
    if (!isClusterConflict(error)) throw error;
    if (tries >= maxAttempts) {
      this.log(`vigil: gave up after ${maxAttempts} lost races; the last, on monitor(s) ${[...error.monitors].join(', ')}: ${error.message}`);
      throw new ProtocolError('STORE_UNAVAILABLE', `Other nodes kept changing this monitor; the change was not stored after ${maxAttempts} attempts. Try again.`, {}, { cause: error });
    }
    // Spread the retries of nodes that keep colliding.
    await sleep(Math.random() * Math.min(50, tries * 2));
  }

  async refreshSubscription(id: string): Promise<void> {
    let mkey = this.subscriptionMonitors.get(id);
    if (mkey === undefined) {
      mkey = await this.pg.monitorOfSubscription(id);
      if (mkey === undefined) return;
      this.subscriptionMonitors.set(id, mkey);
    }
    await this.catchUpOn(mkey);
  }

  /** Reads the monitor's rev (batched per turn) and catches up when the database moved on. */
  private async catchUpOn(mkey: number): Promise<void> {
    const rev = await this.revByKey.get(mkey);
    await this.catchUp(mkey, rev);
  }

  private async catchUp(mkey: number, rev: number | undefined): Promise<void> {
    this.budget?.touch(mkey);
    if (this.stale.has(mkey)) return this.sync(mkey, 'refresh');
    if (rev === undefined || !this.behind(mkey, rev)) return;
    // Read while this node's own batch on the monitor committed: once it settles, memory may hold that rev.
    if (this.queue.writing(mkey)) {
      await this.queue.idle();
      if (this.stale.has(mkey)) return this.sync(mkey, 'refresh');
      if (!this.behind(mkey, rev)) return;
    }
    await this.sync(mkey, 'delta');
  }

  /**
   * Memory is behind the database's rev. Revs of a monitor only grow, and this node's commit at rev K
   * required the database to be at K - 1: memory at a higher rev than the one read holds all of it.
   */
  private behind(mkey: number, rev: number): boolean {
    const known = this.known.get(mkey);
    return known === undefined || rev > known;
  }

  refreshAll(): Promise<void> {
    return this.resyncKnown(true);
  }

  private async refreshFor(operation: string, input: unknown): Promise<void> {
    const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
    if (operation === 'monitors/list' || operation === 'admin/snapshot' || (operation === 'admin/compact' && typeof fields.monitor !== 'string')) {
      return this.resyncKnown(true);
    }
    const monitorId = operation === 'feeds/subscribe' || operation === 'admin/compact' ? fields.monitor : operation.startsWith('monitors/') ? fields.id : undefined;
    if (typeof monitorId === 'string') {
      const row = await this.revById.get(monitorId);
      if (row) await this.catchUp(row.key, row.rev);
      return;
    }
    if (typeof fields.subscription === 'string') await this.refreshSubscription(fields.subscription);
  }

  /** Catches up on every monitor this node holds (all of them when `everything`). */
  private async resyncKnown(everything = false): Promise<void> {
    for (const { key, rev } of await this.pg.allRevs()) {
      if ((everything || this.known.has(key)) && rev !== this.known.get(key)) await this.sync(key, 'delta');
    }
  }

  /**
   * Another node committed on a monitor. Caught up on at once only when someone here waits on it
   * (a long-poll, a stream, a dashboard) or when this node runs its timers and a deadline moved;
   * otherwise the next request on it catches up (every operation compares revs first).
   */
  private changed(mkey: number, rev: number, timers: boolean): void {
    // A stopping node answers nothing more: catching up would read a replica that is closing.
    if (this.stopping) return;
    const known = this.known.get(mkey);
    if (known === undefined || known >= rev) return;
    // Most likely this node's own batch, whose notification came before its commit's answer: looked at once it settles.
    if (this.queue.writing(mkey)) {
      void this.queue.idle().then(() => this.changed(mkey, rev, timers));
      return;
    }
    const feed = this.service.feedByKey(mkey);
    const waited = (feed !== undefined && (feed.waiters.size > 0 || feed.followers.size > 0)) || this.service.hasRecordedListeners;
    if (!waited && !(timers && this.runsTimersOf(mkey))) return;
    this.sync(mkey, 'delta').catch((error) => this.log(`vigil: cannot catch up on monitor ${mkey}: ${(error as Error).message}`));
  }

  private async commit(batch: CapturedBatch): Promise<void> {
    const revs = await this.pg.commit(batch, this.known, (mkey) => this.replica.contradictionsOf(mkey)).catch((error: unknown) => {
      // Another node took these monitors over: their timers and source stop here before anything runs again.
      if (error instanceof FencedOffError) this.ownership?.forfeit(error.fenced);
      throw error;
    });
    const created = [...revs.keys()].some((mkey) => !this.known.has(mkey));
    for (const [mkey, rev] of revs) this.known.set(mkey, rev);
    // A new monitor gets a timer owner at once rather than at the next ownership round.
    if (created) this.ownership?.poke();
    for (const [id, params] of batch.subscriptions) this.subscriptionMonitors.set(id, params[1] as number);
  }

  private async reload(mkeys: ReadonlySet<number>): Promise<void> {
    for (const mkey of mkeys) this.stale.add(mkey);
    for (const mkey of mkeys) await this.syncNow(mkey, 'reload');
  }

  /** Catches up on one monitor; syncs of one monitor run one after another. */
  private sync(mkey: number, mode: SyncMode): Promise<void> {
    const previous = this.syncing.get(mkey) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(() => this.syncNow(mkey, mode));
    this.syncing.set(mkey, next);
    void next.finally(() => {
      if (this.syncing.get(mkey) === next) this.syncing.delete(mkey);
    }).catch(() => {});
    return next;
  }

  private async syncNow(mkey: number, mode: SyncMode): Promise<void> {
    for (;;) {
      const since = mode === 'takeover' ? 0 : (this.known.get(mkey) ?? 0);
      const delta = await this.readDelta(mkey, since, mode);
      // Nothing may be written to the replica while a batch holds its transaction open.
      if (mode !== 'reload') while (this.queue.busy) await this.queue.idle();
      // A refused batch's changes may still be in memory: only a whole reload clears them.
      if (mode === 'delta' && this.stale.has(mkey)) mode = 'refresh';
      const whole = mode === 'reload' || mode === 'refresh' || this.stale.has(mkey);
      if (mode === 'refresh' && !this.stale.has(mkey)) return; // reloaded meanwhile
      if (!delta) {
        // A monitor this node created in a refused batch: it exists nowhere else.
        if (whole && !this.known.has(mkey)) this.service.forgetMonitor(mkey);
        this.stale.delete(mkey);
        return;
      }
      const known = this.known.get(mkey);
      if (known !== undefined && delta.monitor.rev < known) {
        if (mode === 'delta') return; // this node's own commit is newer than what was read
        continue;
      }
      if (!whole && known === delta.monitor.rev) {
        // Memory is current: a takeover only arms the timers (reloading would drop actors that waiting pulls hold).
        if (mode === 'takeover') this.takeTimers(mkey, delta);
        return;
      }
      this.apply(mkey, delta, mode);
      return;
    }
  }

  /** A monitor memory holds nothing of is read page by page (replica-pages.ts); others in one snapshot. */
  private readDelta(mkey: number, since: number, mode: SyncMode): Promise<MonitorDelta | undefined> {
    if (mode === 'reload' || this.service.feedByKey(mkey)) return this.pg.delta(mkey, since, this.replica.head(mkey));
    return readDeltaInPages(this.pg, this.replica, mkey, since, { replicaFree: () => this.replicaFree(), stopping: () => this.stopping });
  }

  private async replicaFree(): Promise<void> {
    while (this.queue.busy) await this.queue.idle();
  }

  /** Drops a monitor the replica budget found cold, after the syncs of it already queued (replica-budget.ts). */
  private dropCold(mkey: number): Promise<'dropped' | 'kept' | 'absent'> {
    let outcome: 'dropped' | 'kept' | 'absent' = 'kept';
    const previous = this.syncing.get(mkey) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(async () => {
      outcome = await this.dropNow(mkey);
    });
    this.syncing.set(mkey, next);
    void next.finally(() => {
      if (this.syncing.get(mkey) === next) this.syncing.delete(mkey);
    }).catch(() => {});
    return next.then(() => outcome);
  }

  private async dropNow(mkey: number): Promise<'dropped' | 'kept' | 'absent'> {
    await this.replicaFree();
    // Checked with no await until the monitor is forgotten: a request that began on it since keeps it.
    const feed = this.service.feedByKey(mkey);
    if (!this.known.has(mkey)) {
      // Pages of a catch-up that never finished (the monitor was deleted meanwhile); not a monitor being created.
      if (!feed && this.replica.head(mkey) > 0) await dropFromReplica(this.replica, mkey, () => this.replicaFree());
      return 'absent';
    }
    const waited = feed !== undefined && (feed.waiters.size > 0 || feed.followers.size > 0);
    if (this.stopping || waited || !this.budget?.isCold(mkey) || this.stale.has(mkey) || this.runsTimersOf(mkey)) return 'kept';
    // From here the node holds nothing of the monitor: its next use catches up from PostgreSQL.
    // A write still queued for it would read its actors back from rows about to go: it runs again instead.
    this.queue.invalidate(mkey);
    this.known.delete(mkey);
    this.service.forgetMonitor(mkey);
    evictActorsOf(this.service.system, mkey);
    await dropFromReplica(this.replica, mkey, () => this.replicaFree());
    return 'dropped';
  }

  private apply(mkey: number, delta: MonitorDelta, mode: SyncMode): void {
    this.budget?.touch(mkey);
    const m = delta.monitor;
    const stats = JSON.parse(m.stats) as FeedStats;
    this.replica.apply(delta, stats.retention_floor);
    this.queue.invalidate(mkey);
    this.known.set(mkey, m.rev);
    this.stale.delete(mkey);
    for (const s of delta.subscriptions) this.subscriptionMonitors.set(s.id, mkey);
    const feed = this.service.reloadMonitor({
      row: {
        key: m.key,
        status: m.status as MonitorStatus,
        definition: JSON.parse(m.definition) as MonitorDefinition,
        ownerTokenHash: m.owner_token_hash,
        subscribeTokenHash: m.subscribe_token_hash,
        stats,
      },
      contradictions: delta.contradictions,
      changed:
        mode === 'delta'
          ? { subscriptions: delta.subscriptions, leases: delta.leases.map((l) => `${mkey}:${l.subject}`) }
          : 'all',
    });
    this.service.sources?.changed(feed);
    // After a reload or a takeover every deadline is armed again (a refused batch may have held a timer's write).
    if (mode === 'takeover' || this.ownership?.owns(mkey)) this.armTimers(mkey, mode === 'delta' ? delta : this.replica.deadlines(mkey));
  }

  /** Resident actors of a monitor just taken over have parked timers: drop them so that their wakes restore them running. */
  private takeTimers(mkey: number, delta: MonitorDelta): void {
    // A write queued for an actor dropped here would read its row back from the replica at flush time,
    // where the queued change is not yet, and store the state before it: refuse it, so that its
    // request runs again on the reloaded monitor.
    this.queue.invalidate(mkey);
    const system = this.service.system;
    for (const l of delta.leases) system.leases.evict(`${mkey}:${l.subject}`);
    for (const s of delta.subscriptions) if (!system.subscriptions.isHeld(s.id)) system.subscriptions.evict(s.id);
    this.armTimers(mkey, this.replica.deadlines(mkey));
    const feed = this.service.feedByKey(mkey);
    if (feed) this.service.sources?.changed(feed);
  }

  /** The owner wakes the monitor's leases and subscriptions when their deadlines come. */
  private armTimers(mkey: number, delta: Pick<MonitorDelta, 'leases' | 'subscriptions'> | ReturnType<ReplicaWriter['deadlines']>): void {
    const system = this.service.system;
    for (const l of delta.leases) if ((!('state' in l) || l.state === 'held') && l.expires_ms !== null) system.wakeLeaseAt(`${mkey}:${l.subject}`, l.expires_ms);
    for (const s of delta.subscriptions) {
      if ((!('state' in s) || s.state === 'live') && s.mute_deadline_ms !== null) system.wakeSubscriptionAt(s.id, s.mute_deadline_ms);
    }
  }

  /** Waits for the batches queued and in flight to commit; writes queued after that are refused. */
  async quiesce(): Promise<void> {
    this.stopping = true;
    await this.budget?.close();
    // Catch-ups already under way write into the replica: they end before it closes.
    await Promise.allSettled([...this.syncing.values()]);
    while (this.queue.busy || this.queue.hasPending) {
      await this.queue.settled().catch(() => {});
      await this.queue.idle();
    }
    this.queue.close();
  }

  async close(): Promise<void> {
    await this.heartbeat?.close();
    await this.ownership?.close();
    await this.listener?.close();
    await this.connection.close();
    this.replicaFile.remove();
  }
}
