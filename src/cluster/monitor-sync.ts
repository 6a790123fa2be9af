// How a cluster node's memory and local SQLite replica follow PostgreSQL, one
// monitor at a time: caught up from the rev the node knows (a delta), reloaded
// whole after a refused batch, armed with its timers on a takeover, and
// dropped from the replica when it went cold past the replica's budget. The
// catch-ups of one monitor run one after another; none writes to the replica
// while a batch holds its transaction open. One file past 300 lines on
// purpose: it is the only owner of what memory knows of each monitor (known,
// heard, stale, dormant) and of the per-monitor queue, so every path that
// changes them, and the order they do it in, reads in one place.
import type { MonitorService } from '../service/service.ts';
import { evictActorsOf } from '../service/monitor-reload.ts';
import type { FeedStats, MonitorDefinition, MonitorStatus } from '../store/records.ts';
import type { MonitorDelta, PgStore } from '../store/postgres/pg-store.ts';
import type { ClusterCommit } from './cluster-commit.ts';
import { dropFromReplica, ReplicaBudget } from './replica-budget.ts';
import { readDeltaInPages } from './replica-pages.ts';
import type { ReplicaWriter } from './replica-writer.ts';
import { SyncQueue } from './sync-queue.ts';

// delta: what changed since the known rev; reload: everything, from inside the batch that was refused;
// refresh: everything, for a monitor whose memory may be ahead of the database; takeover: arm the timers.
export type SyncMode = 'delta' | 'reload' | 'refresh' | 'takeover';

export interface MonitorSyncParts {
  readonly pg: PgStore;
  readonly queue: ClusterCommit;
  readonly replica: ReplicaWriter;
  readonly service: MonitorService;
  /** The replica's budget in bytes: cold monitors past it are dropped (replica-budget.ts). */
  readonly budgetBytes: number;
  /** This node holds the monitor's ownership lease: it runs its timers and source. */
  runsTimersOf(mkey: number): boolean;
  /** The server stops: other nodes' changes are no longer caught up on. */
  stopping(): boolean;
  /** A subscription read from the database belongs to this monitor. */
  noteSubscription(id: string, mkey: number): void;
  log(line: string): void;
}

export class MonitorSync {
  /** The rev of each monitor that memory and the local replica hold. */
  readonly known = new Map<number, number>();
  /** Catch-ups and drops, one after another per monitor (sync-queue.ts). */
  private readonly syncing = new SyncQueue();
  /** Monitors whose memory may hold a refused batch's changes: reloaded whole before their next use. */
  private readonly stale = new Set<number>();
  /** The highest rev the database's notifications named per monitor (only when above what memory held then). */
  private readonly heard = new Map<number, number>();
  private readonly budget: ReplicaBudget;
  /**
   * Monitors whose timers run here but that the budget dropped (dormant): each is read again, and its
   * timers armed, when its next deadline comes (or when another node moves one of its deadlines).
   */
  private readonly dormant = new Map<number, NodeJS.Timeout>();
  private readonly pg: PgStore;
  private readonly queue: ClusterCommit;
  private readonly replica: ReplicaWriter;
  private readonly service: MonitorService;
  private readonly log: (line: string) => void;

  constructor(private readonly parts: MonitorSyncParts) {
    this.pg = parts.pg;
    this.queue = parts.queue;
    this.replica = parts.replica;
    this.service = parts.service;
    this.log = parts.log;
    this.budget = new ReplicaBudget(
      { usedBytes: () => parts.replica.usedBytes(), drop: (mkey) => this.dropCold(mkey), log: parts.log },
      { budgetBytes: parts.budgetBytes, coldMs: 5000, checkMs: 2000 },
    );
  }

  private get stopping(): boolean {
    return this.parts.stopping();
  }

  private runsTimersOf(mkey: number): boolean {
    return this.parts.runsTimersOf(mkey);
  }

  /** This node's batch committed: memory holds these monitors at these revs. Says whether one of them is new. */
  committed(revs: ReadonlyMap<number, number>): boolean {
    const created = [...revs.keys()].some((mkey) => !this.known.has(mkey));
    for (const [mkey, rev] of revs) {
      this.known.set(mkey, rev);
      // A write is a use: publishes on current memory never pass through catchUp.
      this.budget.touch(mkey);
    }
    this.budget.checkSoon();
    return created;
  }

  /** The server stops: the budget's checks end, and catch-ups already under way finish (they write into the replica). */
  async quiesce(): Promise<void> {
    for (const wake of this.dormant.values()) clearTimeout(wake);
    this.dormant.clear();
    await this.budget.close();
    await this.syncing.drain();
  }

  /** A request is about to use the monitor, whose rev the database gave as `rev`: memory catches up when behind (reloads when stale). */
  async catchUp(mkey: number, rev: number | undefined): Promise<void> {
    this.budget.touch(mkey);
    if (this.stale.has(mkey)) return this.sync(mkey, 'refresh');
    if (rev === undefined || !this.behind(mkey, rev)) return;
    // Read while this node's own batch on the monitor committed: once it settles, memory may hold that rev.
    if (this.queue.writing(mkey)) {
      await this.queue.idle();
      if (this.stale.has(mkey)) return this.sync(mkey, 'refresh');
      if (!this.behind(mkey, rev)) return;
    }
    await this.sync(mkey, 'delta', rev);
  }

  /**
   * Memory holds the monitor, no catch-up of it is under way, and no notification named a rev
   * beyond memory's: as far as this node can tell without asking, memory is the database's state.
   * (A notification can be late or lost, so this is a guess that a write's claim then checks.)
   */
  believedCurrent(mkey: number): boolean {
    const known = this.known.get(mkey);
    return known !== undefined && !this.stale.has(mkey) && !this.syncing.busy(mkey) && (this.heard.get(mkey) ?? 0) <= known;
  }

  /**
   * Memory is behind the database's rev. Revs of a monitor only grow, and this node's commit at rev K
   * required the database to be at K - 1: memory at a higher rev than the one read holds all of it.
   */
  private behind(mkey: number, rev: number): boolean {
    const known = this.known.get(mkey);
    return known === undefined || rev > known;
  }

  /** Catches up on every monitor this node holds (all of them when `everything`). */
  async resyncKnown(everything = false): Promise<void> {
    for (const { key, rev } of await this.pg.allRevs()) {
      if ((everything || this.known.has(key)) && rev !== this.known.get(key)) await this.sync(key, 'delta');
    }
  }

  /**
   * Another node committed on a monitor. Caught up on at once only when someone here waits on it
   * (a long-poll, a stream, a dashboard) or when this node runs its timers and a deadline moved;
   * otherwise the next request on it catches up (operations compare revs first; a publish's claim compares them at commit).
   */
  changed(mkey: number, rev: number, timers: boolean): void {
    // A stopping node answers nothing more: catching up would read a replica that is closing.
    if (this.stopping) return;
    const known = this.known.get(mkey);
    // A dormant monitor whose deadlines moved elsewhere: read again here, where its timers run.
    if (known === undefined && timers && this.runsTimersOf(mkey)) {
      this.sync(mkey, 'takeover').catch((error) => this.log(`vigil: cannot catch up on monitor ${mkey}: ${(error as Error).message}`));
      return;
    }
    if (known === undefined || known >= rev) return;
    if (rev > (this.heard.get(mkey) ?? 0)) this.heard.set(mkey, rev);
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

  async reload(mkeys: ReadonlySet<number>): Promise<void> {
    for (const mkey of mkeys) this.stale.add(mkey);
    for (const mkey of mkeys) await this.syncNow(mkey, 'reload');
  }

  /**
   * Catches up on one monitor, after the catch-ups of it already queued; a delta or a refresh joins
   * one of its mode that waits its turn (sync-queue.ts). `until`, for a delta: the rev the request
   * needs; once memory holds it, nothing is read.
   */
  sync(mkey: number, mode: SyncMode, until?: number): Promise<void> {
    const joinable = mode === 'delta' ? { mode, until } : mode === 'refresh' ? { mode } : undefined;
    return this.syncing.run(mkey, (upTo) => (this.needed(mkey, mode, upTo) ? this.syncNow(mkey, mode) : Promise.resolve()), joinable);
  }

  /** A delta whose rev the catch-ups before it reached, or a refresh of a monitor reloaded meanwhile, reads nothing. */
  private needed(mkey: number, mode: SyncMode, until: number | undefined): boolean {
    if (mode === 'refresh') return this.stale.has(mkey);
    if (mode === 'delta' && until !== undefined) return this.stale.has(mkey) || this.behind(mkey, until);
    return true;
  }

  private async syncNow(mkey: number, mode: SyncMode): Promise<void> {
    for (;;) {
      const since = mode === 'takeover' ? 0 : (this.known.get(mkey) ?? 0);
      // Observations are read after the replica's head, which counts the rows of a batch in flight on the monitor.
      const after = this.replica.head(mkey);
      const delta = await this.readDelta(mkey, since, after, mode);
      // Nothing may be written to the replica while a batch holds its transaction open.
      if (mode !== 'reload') while (this.queue.busy) await this.queue.idle();
      // That batch was refused since and its rows are gone: the seqs it had used were never read (another
      // node's rows may be there in PostgreSQL), and storing this read would leave a gap for good once the
      // next write lands after it. Read again.
      if (this.replica.head(mkey) < after) continue;
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
  private readDelta(mkey: number, since: number, after: number, mode: SyncMode): Promise<MonitorDelta | undefined> {
    if (mode === 'reload' || this.service.feedByKey(mkey)) return this.pg.delta(mkey, since, after);
    return readDeltaInPages(this.pg, this.replica, mkey, since, { replicaFree: () => this.replicaFree(), stopping: () => this.stopping });
  }

  private async replicaFree(): Promise<void> {
    while (this.queue.busy) await this.queue.idle();
  }

  /** Drops a monitor the replica budget found cold, after the syncs of it already queued (replica-budget.ts). */
  private dropCold(mkey: number): Promise<'dropped' | 'dormant' | 'kept' | 'absent'> {
    let outcome: 'dropped' | 'dormant' | 'kept' | 'absent' = 'kept';
    return this.syncing
      .run(mkey, async () => {
        outcome = await this.dropNow(mkey);
      })
      .then(() => outcome);
  }

  private async dropNow(mkey: number): Promise<'dropped' | 'dormant' | 'kept' | 'absent'> {
    await this.replicaFree();
    // Checked with no await until the monitor is forgotten: a request that began on it since keeps it.
    const feed = this.service.feedByKey(mkey);
    if (!this.known.has(mkey)) {
      // Pages of a catch-up that never finished (the monitor was deleted meanwhile); not a monitor being created.
      if (!feed && this.replica.head(mkey) > 0) await dropFromReplica(this.replica, mkey, () => this.replicaFree());
      return 'absent';
    }
    const waited = feed !== undefined && (feed.waiters.size > 0 || feed.followers.size > 0);
    // A monitor whose timers run here may go dormant (its next deadline wakes it); one whose live source runs here stays.
    const owned = this.runsTimersOf(mkey);
    if (this.stopping || waited || !this.budget.isCold(mkey) || this.stale.has(mkey) || (owned && feed !== undefined && this.service.sources?.runsSource(feed.id) === true)) return 'kept';
    const due = owned ? this.nextDeadline(mkey) : undefined;
    // From here the node holds nothing of the monitor: its next use catches up from PostgreSQL.
    // A write still queued for it would read its actors back from rows about to go: it runs again instead.
    this.queue.invalidate(mkey, true);
    this.known.delete(mkey);
    this.heard.delete(mkey);
    this.service.forgetMonitor(mkey);
    evictActorsOf(this.service.system, mkey);
    if (due !== undefined) this.sleepUntil(mkey, due);
    await dropFromReplica(this.replica, mkey, () => this.replicaFree());
    return owned ? 'dormant' : 'dropped';
  }

  /** The earliest lease expiry or mute deadline of a monitor, from the replica. */
  private nextDeadline(mkey: number): number | undefined {
    const { leases, subscriptions } = this.replica.deadlines(mkey);
    const all = [...leases.map((l) => l.expires_ms), ...subscriptions.map((s) => s.mute_deadline_ms)].filter((at) => at !== null);
    return all.length === 0 ? undefined : Math.min(...all);
  }

  private sleepUntil(mkey: number, dueMs: number): void {
    clearTimeout(this.dormant.get(mkey));
    // A far deadline is looked at again within the hour (setTimeout's range ends at 24.8 days).
    const wake = setTimeout(() => this.wake(mkey), Math.min(Math.max(0, dueMs - this.service.now()), 3_600_000));
    wake.unref();
    this.dormant.set(mkey, wake);
  }

  private wake(mkey: number): void {
    this.dormant.delete(mkey);
    if (this.stopping || this.known.has(mkey) || !this.runsTimersOf(mkey)) return;
    this.sync(mkey, 'takeover').catch((error) => this.log(`vigil: cannot read monitor ${mkey} again for its timers: ${(error as Error).message}`));
  }

  private apply(mkey: number, delta: MonitorDelta, mode: SyncMode): void {
    this.budget.touch(mkey);
    this.budget.checkSoon();
    clearTimeout(this.dormant.get(mkey));
    this.dormant.delete(mkey);
    const m = delta.monitor;
    const stats = JSON.parse(m.stats) as FeedStats;
    this.replica.apply(delta, stats.retention_floor);
    // Anything but a delta replaces memory of the monitor whole (reloadMonitor below, changed 'all').
    this.queue.invalidate(mkey, mode !== 'delta');
    this.known.set(mkey, m.rev);
    this.stale.delete(mkey);
    for (const s of delta.subscriptions) this.parts.noteSubscription(s.id, mkey);
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
      leaseRows: delta.leases,
      changed:
        mode === 'delta'
          ? { subscriptions: delta.subscriptions, leases: delta.leases.map((l) => `${mkey}:${l.subject}`) }
          : 'all',
    });
    this.service.sources?.changed(feed);
    // After a reload or a takeover every deadline is armed again (a refused batch may have held a timer's write).
    if (mode === 'takeover' || this.runsTimersOf(mkey)) this.armTimers(mkey, mode === 'delta' ? delta : this.replica.deadlines(mkey));
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
}
