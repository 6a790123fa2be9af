// The group commit of a cluster node. A batch is applied to the node's local
// SQLite replica inside a transaction, captured, and written to PostgreSQL;
// the local transaction commits only when PostgreSQL has committed, so an
// acknowledged write is always in the database. One batch is in flight at a
// time; writes queued meanwhile form the next batch.
//
// A batch that lost a race (ClusterConflictError) is rolled back locally and
// its monitors are reloaded from the database; a queued batch computed on the
// same stale memory is refused as well, and the requests in both run again.
import { Listeners } from '../events/listeners.ts';
import type { CommitListener } from '../store/group-commit.ts';
import type { SqlDriver } from '../store/sql-driver.ts';
import { CapturedBatch } from '../store/postgres/captured-batch.ts';
import { QueuedWrites, type Settle, type Write } from '../store/queued-writes.ts';
import type { CommitQueue, Store } from '../store/store.ts';
import { ClusterConflictError, isClusterConflict } from '../store/cluster-conflict.ts';

export interface ClusterCommitHooks {
  /** Writes the batch to PostgreSQL (rejects with ClusterConflictError when a monitor moved). */
  commit(batch: CapturedBatch): Promise<void>;
  /** Reloads these monitors from the database, dropping what memory holds of them. */
  reload(mkeys: ReadonlySet<number>): Promise<void>;
  log(line: string): void;
}

export class ClusterCommit implements CommitQueue {
  private readonly queue = new QueuedWrites(() => this.flush());
  private inFlight: Promise<void> | undefined;
  /** The batch being written to PostgreSQL, until it settles. */
  private writingBatch: CapturedBatch | undefined;
  private readonly idleWaiters: Array<() => void> = [];
  /** Monitors whose memory changed after the queued writes were computed: the next batch touching them is refused. */
  private refused = new Set<number>();
  private closed = false;
  private readonly listeners = new Listeners<CommitListener>();

  constructor(
    private readonly driver: SqlDriver,
    private readonly store: Store,
    private readonly hooks: ClusterCommitHooks,
  ) {}

  append(write: Write): void {
    this.queue.append(write);
  }

  put(key: string, write: Write): void {
    this.queue.put(key, write);
  }

  settled(): Promise<void> {
    return this.queue.pending ?? this.inFlight ?? Promise.resolve();
  }

  get hasPending(): boolean {
    return this.queue.pending !== undefined;
  }

  /** A cluster node never stops writing for good: a failed batch is refused and its monitors reloaded. */
  get failed(): unknown {
    return undefined;
  }

  /** `committed` names the heads each batch stored; `failed` is never told (a failed batch is refused and its monitors reloaded). */
  on<E extends keyof CommitListener>(event: E, listener: CommitListener[E]): () => void {
    return this.listeners.on(event, listener);
  }

  off<E extends keyof CommitListener>(event: E, listener: CommitListener[E]): void {
    this.listeners.off(event, listener);
  }

  /** A batch is in flight: the local replica has an open transaction. */
  get busy(): boolean {
    return this.inFlight !== undefined;
  }

  /** The batch in flight writes this monitor: a rev read meanwhile may already show its commit. */
  writing(mkey: number): boolean {
    return this.writingBatch?.written.has(mkey) ?? false;
  }

  /** Resolves when no batch is in flight (the local replica has no open transaction). */
  idle(): Promise<void> {
    if (!this.inFlight) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Memory of this monitor was replaced: writes queued before now were computed on the old state. */
  invalidate(mkey: number): void {
    if (this.queue.pending) this.refused.add(mkey);
  }

  /**
   * The replica is about to close (the server stops, after its requests were answered and its
   * batches committed): a write queued from now on is refused instead of opening a transaction on
   * a replica that closes under it.
   */
  close(): void {
    this.closed = true;
    this.flush();
  }

  flush(): void {
    if (this.inFlight) return;
    const taken = this.queue.take();
    if (!taken) return;
    const { settle } = taken;
    if (this.closed) {
      settle.reject(new Error('the server is stopping'));
      return;
    }
    const writes = [...taken.ordered, ...taken.latest.values()];
    const refused = this.refused;
    this.refused = new Set();
    const batch = new CapturedBatch();
    this.driver.exec('BEGIN IMMEDIATE');
    try {
      this.store.capture = (kind, mkey, params) => batch.add(kind, mkey, params);
      for (const write of writes) write();
    } catch (error) {
      this.driver.exec('ROLLBACK');
      // A row read from memory that a reload replaced under the queued write (a subscription created in a
      // refused batch): the same lost race, so the requests run again on the reloaded state.
      const lost = new Set([...batch.touched, ...refused]);
      this.track(this.finish(settle, refused.size > 0 ? new ClusterConflictError(lost, (error as Error).message, { cause: error }) : error, lost));
      return;
    } finally {
      this.store.capture = undefined;
    }
    const stale = [...batch.touched].filter((mkey) => refused.has(mkey));
    if (stale.length > 0) {
      this.driver.exec('ROLLBACK');
      this.track(this.finish(settle, new ClusterConflictError(batch.touched, 'the monitor was reloaded while this batch was queued'), batch.touched));
      return;
    }
    if (batch.empty) {
      this.driver.exec('COMMIT');
      void this.finish(settle, undefined, batch.touched, batch);
      return;
    }
    this.writingBatch = batch;
    const committed = this.hooks.commit(batch).then(
      () => {
        this.driver.exec('COMMIT');
        return undefined;
      },
      (error: unknown) => {
        this.driver.exec('ROLLBACK');
        return error ?? new Error('commit failed');
      },
    ).catch((error: unknown) => error);
    this.track(committed.then((error) => this.finish(settle, error, batch.touched, batch)));
  }

  private track(work: Promise<void>): void {
    this.inFlight = work.finally(() => {
      this.inFlight = undefined;
      this.writingBatch = undefined;
      const waiters = this.idleWaiters.splice(0);
      for (const waiter of waiters) waiter();
      if (!this.queue.pending) return;
      // A catch-up waiting for the replica to be free runs first: flushing the next batch at once
      // would keep it waiting for as long as writes keep coming (requests hung for 20 s and more).
      if (waiters.length > 0) setImmediate(() => this.flush());
      else this.flush();
    });
  }

  private async finish(settle: Settle, error: unknown, touched: ReadonlySet<number>, batch?: CapturedBatch): Promise<void> {
    if (error === undefined) {
      settle.resolve();
      const heads = new Map([...(batch?.seqs ?? [])].map(([mkey, range]) => [mkey, range.last]));
      this.listeners.emit('committed', heads);
    } else {
      // Memory of these monitors is ahead of the database: reload it (which refuses whatever was queued
      // on it) before the requests hear of the refusal, so that their next attempt runs on what the
      // database holds and not on what the refused attempt left in memory (a lease it set to held).
      try {
        await this.hooks.reload(touched);
      } catch (reloadError) {
        for (const mkey of touched) this.refused.add(mkey);
        this.hooks.log(`vigil: cannot reload monitors from PostgreSQL (${(reloadError as Error).message}); they are reloaded before their next use`);
      }
      settle.reject(error);
      // Not a failure for good ('failed' is not told): the next batch tries PostgreSQL again.
      if (!isClusterConflict(error)) this.hooks.log(`vigil: a batch was not stored in PostgreSQL: ${(error as Error).message}`);
    }
  }
}
