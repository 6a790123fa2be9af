// One `vigil serve` node of a cluster on PostgreSQL (protocol.md §20). The
// database is the authority; the node's service runs on a local SQLite
// replica that is caught up on a monitor before an operation on it
// (monitor-sync.ts), and every batch it writes is checked in PostgreSQL
// against the monitor's change counter (src/store/postgres/pg-store.ts). A
// lost race reloads the monitor and runs the operation again. Wakes come by
// LISTEN/NOTIFY; a monitor's timers are armed by the holder of its ownership
// lease (ownership.ts), whose timer and source writes are fenced by the
// lease's token.
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProtocolError } from '../protocol/errors.ts';
import { defaults } from '../service/defaults.ts';
import { type TargetedOperation, touchedBy } from '../service/operation-targets.ts';
import type { MonitorService, ClusterNodeHooks } from '../service/service.ts';
import type { ClusterContention } from '../service/cluster-hooks.ts';
import type { CapturedBatch } from '../store/postgres/captured-batch.ts';
import { isStoreFailure, type PgConnection, openPostgres } from '../store/postgres/pg-connection.ts';
import { PgStore } from '../store/postgres/pg-store.ts';
import type { SqlDriver } from '../store/sql-driver.ts';
import type { Store } from '../store/store.ts';
import { ClusterCommit } from './cluster-commit.ts';
import { FencedOffError } from '../store/cluster-conflict.ts';
import { ChangeListener } from './change-listener.ts';
import { Heartbeat, type NodeInfo } from './heartbeat.ts';
import { Ownership } from './ownership.ts';
import { LookupBatch } from './lookup-batch.ts';
import { MonitorSync } from './monitor-sync.ts';
import { ReplicaWriter } from './replica-writer.ts';
import { ReplicaFile } from './replica-file.ts';
import { storeUnavailable } from './store-unavailable.ts';
import { type LostRace, Races } from './races.ts';
import { Turns, turnsChannel } from './turns.ts';

/** Reads before a request's change, each on a new session when the database ended the last one. */
const readAttempts = 3;
/** Pages of the replica held in memory. */
const replicaCacheKiB = 16 * 1024;

export class ClusterNode implements ClusterNodeHooks {
  readonly node: { id: string; readonly store: 'postgres' };
  readonly pg: PgStore;
  private service!: MonitorService;
  private replica!: ReplicaWriter;
  private queue!: ClusterCommit;
  /** Follows PostgreSQL on each monitor memory and the replica hold (made on attach). */
  private monitors!: MonitorSync;
  /** Set once the server stops: other nodes' changes are no longer caught up on. */
  private stopping = false;
  private readonly subscriptionMonitors = new Map<string, number>();
  private listener: ChangeListener | undefined;
  private readonly revByKey = new LookupBatch<number, number>((keys) => this.pg.revsByKey(keys));
  private readonly revById = new LookupBatch<string, { key: number; rev: number }>((ids) => this.pg.revsById(ids));
  private ownership: Ownership | undefined;
  private readonly turns = new Turns({
    nodeId: () => this.node.id,
    send: (message) => void this.connection.pool.query({ name: 'vigil_turn', text: 'select pg_notify($1, $2)', values: [turnsChannel, JSON.stringify(message)] }).catch(() => {}),
    holdUntil: (atMs) => this.queue.holdUntil(atMs),
    holdsMonitor: (mkey) => this.monitors?.known.has(mkey) ?? false,
    now: Date.now,
  });
  private readonly races = new Races(this.turns, (line) => this.log(line));
  private heartbeat: Heartbeat | undefined;
  /** The replica's private file (Store.open's path and `scratch`). */
  readonly replicaFile = new ReplicaFile();
  readonly replicaStore = { cacheKiB: replicaCacheKiB };

  private constructor(
    readonly connection: PgConnection,
    private readonly log: (line: string) => void,
    private readonly replicaBudgetMB: number,
  ) {
    this.node = { id: '', store: 'postgres' };
    this.pg = new PgStore(connection);
  }

  static async open(
    url: string,
    log: (line: string) => void,
    replicaBudgetMB: number = defaults.replicaBudgetMB,
    storeSessions: number = defaults.storeSessions,
  ): Promise<ClusterNode> {
    return new ClusterNode(await openPostgres(url, storeSessions), log, replicaBudgetMB);
  }

  /** The store's commit queue (passed to Store.open before the service exists). */
  readonly commitQueue = (driver: SqlDriver, store: Store): ClusterCommit => {
    this.queue = new ClusterCommit(driver, store, { commit: (batch) => this.commit(batch), reload: (mkeys) => this.monitors.reload(mkeys), log: this.log });
    return this.queue;
  };

  async attach(service: MonitorService): Promise<void> {
    this.service = service;
    this.replica = new ReplicaWriter(service.store.driver);
    service.joinCluster(this);
    const monitors = new MonitorSync({
      pg: this.pg,
      queue: this.queue,
      replica: this.replica,
      service,
      budgetBytes: this.replicaBudgetMB * (1 << 20),
      runsTimersOf: (mkey) => this.runsTimersOf(mkey),
      stopping: () => this.stopping,
      noteSubscription: (id, mkey) => this.subscriptionMonitors.set(id, mkey),
      log: this.log,
    });
    this.monitors = monitors;
    this.listener = await ChangeListener.start(
      this.connection,
      { changed: (mkey, rev, timers) => monitors.changed(mkey, rev, timers), reconnected: () => monitors.resyncKnown(), turn: (message) => this.turns.heard(message) },
      this.log,
    );
  }

  /**
   * Names this node as soon as it listens, before it answers anything (call it in the same turn as the
   * listen resolves): /discover and the rows it writes never carry an empty id. The id is `--node-id`
   * when given, else derived from the host name and the port, so a node restarted on its port keeps
   * its id. Then it beats, and only once its first heartbeat is written (so the live list includes it
   * and the others) does it take monitors' timers: before, a node took them at start under the id "".
   */
  async identify(url: string, port: number, id?: string): Promise<void> {
    this.node.id = id ?? `node-${createHash('sha256').update(`${hostname()}:${port}`).digest('hex').slice(0, 12)}`;
    const heartbeat = new Heartbeat(this.connection, { id: this.node.id, url }, this.log);
    this.heartbeat = heartbeat;
    await heartbeat.start();
    if (this.stopping) return;
    this.ownership = await Ownership.start(this.connection, {
      acquired: (mkey) => this.monitors.sync(mkey, 'takeover'),
      // Every lease lapsed: stop the sources; whoever takes the monitors starts them.
      released: () => {
        for (const feed of this.service.allFeeds()) this.service.sources?.changed(feed);
      },
      nodeId: () => this.node.id,
      assigned: (mkey, holders) => heartbeat.assignee(mkey, holders) === this.node.id,
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

  /** The nodes alive now (heartbeats within the last few seconds), this one first. */
  liveNodes(): readonly NodeInfo[] {
    return this.heartbeat?.live() ?? [{ id: this.node.id, url: '' }];
  }

  get contention(): ClusterContention {
    return this.races.contention;
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
  run<T>(operation: TargetedOperation, input: unknown, attempt: () => Promise<T>): Promise<T> {
    return this.races.run((lost) => this.attempts(operation, input, attempt, lost));
  }

  private async attempts<T>(operation: TargetedOperation, input: unknown, attempt: () => Promise<T>, lost: LostRace): Promise<T> {
    for (let tries = 1, lostSessions = 0; ; tries++) {
      const unread = tries === 1 ? this.publishOnCurrentMemory(operation, input) : undefined;
      try {
        if (unread === undefined) await this.refreshFor(operation, input);
        // No await between the reservation and the attempt: a concurrent create would take the key.
        if (operation === 'monitors/create' && !this.service.hasReservedMonitorKey) this.service.reserveMonitorKey(await this.pg.nextMonitorKey());
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
        if (unread !== undefined && (await this.refusedOnStaleMemory(error, unread))) continue;
        await lost(error, tries);
      }
    }
  }

  /**
   * A publish appends on every success, and its batch stands only while the monitor's rev in
   * PostgreSQL is still the one memory holds (the claim, src/store/postgres/pg-commit.ts): a publish
   * that ran on stale memory loses its race and runs again on fresh state. So on a monitor memory
   * believes current it runs without reading the rev first, which saves a round trip to the
   * database per batch. Returns the monitor's key when it may, undefined when the rev is read first.
   */
  private publishOnCurrentMemory(operation: TargetedOperation, input: unknown): number | undefined {
    if (operation !== 'monitors/publish' || this.stopping) return undefined;
    const touched = touchedBy(operation, input);
    const id = touched.every ? undefined : touched.monitor;
    const feed = typeof id === 'string' ? this.service.feed(id) : undefined;
    return feed && this.monitors.believedCurrent(feed.key) ? feed.key : undefined;
  }

  /**
   * A refusal of a publish run on memory not read first stands only if memory was current: when
   * the database's rev moved past it, the publish runs again on fresh state. (Not a store failure:
   * a batch whose commit may have landed is never run again.)
   */
  private async refusedOnStaleMemory(error: unknown, mkey: number): Promise<boolean> {
    if (!(error instanceof ProtocolError) || error.code === 'STORE_UNAVAILABLE') return false;
    const rev = await this.revByKey.get(mkey).catch(() => undefined);
    return rev !== this.monitors.known.get(mkey);
  }

  /**
   * A write the server makes on its own (a live source's observation): run like a request, on the
   * monitor's fresh state and again after a lost race. Resolves undefined once stored, or the error
   * that kept it out after a request's retries; the writer keeps it and decides when to try again.
   */
  async writeOn(mkey: number, attempt: () => Promise<void>): Promise<Error | undefined> {
    try {
      return await this.races.run(async (lost) => {
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
            await lost(error, tries);
          }
        }
      });
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
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
    await this.monitors.catchUp(mkey, rev);
  }

  refreshAll(): Promise<void> {
    return this.monitors.resyncKnown(true);
  }

  private async refreshFor(operation: TargetedOperation, input: unknown): Promise<void> {
    const touched = touchedBy(operation, input);
    if (touched.every) return this.monitors.resyncKnown(true);
    if (typeof touched.monitor === 'string') {
      const row = await this.revById.get(touched.monitor);
      if (row) await this.monitors.catchUp(row.key, row.rev);
      return;
    }
    const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
    if (typeof fields.subscription === 'string') await this.refreshSubscription(fields.subscription);
  }

  private async commit(batch: CapturedBatch): Promise<void> {
    const revs = await this.pg.commit(batch, this.monitors.known, (mkey) => this.replica.contradictionsOf(mkey)).catch((error: unknown) => {
      // Another node took these monitors over: their timers and source stop here before anything runs again.
      if (error instanceof FencedOffError) this.ownership?.forfeit(error.fenced);
      throw error;
    });
    const created = this.monitors.committed(revs);
    this.turns.finished(revs.keys());
    // A new monitor gets a timer owner at once rather than at the next ownership round.
    if (created) this.ownership?.poke();
    for (const [id, params] of batch.subscriptions) this.subscriptionMonitors.set(id, params[1] as number);
  }

  /** Waits for the batches queued and in flight to commit; writes queued after that are refused. */
  async quiesce(): Promise<void> {
    this.stopping = true;
    // Catch-ups already under way write into the replica: they end before it closes.
    await this.monitors?.quiesce();
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
