// The group commit of a cluster node. A batch is applied to the node's local
// SQLite replica inside a transaction, captured, and written to PostgreSQL;
// the local transaction commits only when PostgreSQL has committed, so an
// acknowledged write is always in the database. One batch is in flight at a
// time; writes queued meanwhile form the next batch.
//
// A batch that lost a race (ClusterConflictError) is rolled back locally and
// the monitors whose memory it left changed are reloaded from the database; a
// queued write computed on memory that a reload replaced since is refused as
// well (stale-writes.ts), and the requests of a refused batch run again.
import { Listeners } from '../events/listeners.ts';
import type { CommitListener } from '../store/group-commit.ts';
import type { SqlDriver } from '../store/sql-driver.ts';
import { CapturedBatch } from '../store/postgres/captured-batch.ts';
import { QueuedWrites, type Settle, type TakenBatch, type Write } from '../store/queued-writes.ts';
import type { CommitQueue, Store } from '../store/store.ts';
import { ClusterConflictError, isClusterConflict } from '../store/cluster-conflict.ts';
import { runJudged, StaleWrites } from './stale-writes.ts';

/** Writes queued before a monitor's memory was replaced, cut off from those queued after (see invalidate). */
interface Sealed {
  readonly batches: TakenBatch[];
  /** Settles with the first batch sealed. */
  readonly settled: Promise<void>;
}

export interface ClusterCommitHooks {
  /** Writes the batch to PostgreSQL (rejects with ClusterConflictError when a monitor moved). */
  commit(batch: CapturedBatch): Promise<void>;
  /** Reloads these monitors from the database, dropping what memory holds of them. */
  reload(mkeys: ReadonlySet<number>): Promise<void>;
  log(line: string): void;
}

export class ClusterCommit implements CommitQueue {
  private readonly queue = new QueuedWrites(() => this.flush());
  private sealed: Sealed | undefined;
  private readonly stale = new StaleWrites();
  private inFlight: Promise<void> | undefined;
  /** The batch being written to PostgreSQL, until it settles. */
  private writingBatch: CapturedBatch | undefined;
  private readonly idleWaiters: Array<() => void> = [];
  private closed = false;
  /** Batches wait until then: another node's turn on a monitor both keep writing (turns.ts). */
  private heldUntil = 0;
  private holdTimer: NodeJS.Timeout | undefined;
  private readonly listeners = new Listeners<CommitListener>();

  constructor(
    private readonly driver: SqlDriver,
    private readonly store: Store,
    private readonly hooks: ClusterCommitHooks,
  ) {}

  append(write: Write): void {
    this.stale.stamp(write);
    this.queue.append(write);
  }

  put(key: string, write: Write): void {
    this.stale.stamp(write);
    this.queue.put(key, write);
  }

  settled(): Promise<void> {
    return this.queue.pending ?? this.sealed?.settled ?? this.inFlight ?? Promise.resolve();
  }

  get hasPending(): boolean {
    return this.queue.pending !== undefined || this.sealed !== undefined;
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

  /**
   * Memory of this monitor changed under the queued writes (`whole`: it was replaced whole, by a
   * reload or a drop): those touching it were computed on the old state and their batch is refused.
   * After a whole replacement the writes queued so far are sealed into a batch of their own, so that
   * writes made on the new state (the expiries of the leases the reload re-arms, the requests that
   * waited for it) go into the next batch instead of being refused with the stale ones.
   */
  invalidate(mkey: number, whole = false): void {
    this.stale.invalidate(mkey, whole);
    const pending = this.queue.pending;
    if (whole && pending) {
      const taken = this.queue.take()!;
      if (this.sealed) this.sealed.batches.push(taken);
      else this.sealed = { batches: [taken], settled: pending };
    }
    if (!this.hasPending) this.stale.prune();
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

  /** Holds the next batches until `atMs` (a Date.now() time), for another node's turn; 0 goes on now. */
  holdUntil(atMs: number): void {
    this.heldUntil = atMs;
    if (atMs === 0 && this.holdTimer) {
      clearTimeout(this.holdTimer);
      this.holdTimer = undefined;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    if (this.inFlight) return;
    const heldFor = this.heldUntil - Date.now();
    if (heldFor > 0 && !this.closed) {
      this.holdTimer ??= setTimeout(() => {
        this.holdTimer = undefined;
        this.flush();
      }, heldFor);
      return;
    }
    const taken = this.takeNext();
    if (!taken) return;
    const settles = [...taken.batches.map((b) => b.settle)];
    const settle: Settle = {
      resolve: () => {
        for (const s of settles) s.resolve();
      },
      reject: (error) => {
        for (const s of settles) s.reject(error);
      },
    };
    if (this.closed) {
      settle.reject(new Error('the server is stopping'));
      this.flush();
      return;
    }
    const horizon = this.stale.current;
    const batch = new CapturedBatch();
    this.driver.exec('BEGIN IMMEDIATE');
    let { failure, stale, leftInMemory } = runJudged(writesOf(taken.batches), this.store, batch, this.stale);
    // Sealed writes that stand take the writes queued after them along: a row they put is read now, with
    // what the later writes changed, and must not be stored without those writes' observations.
    const after = taken.sealed && !stale && failure === undefined ? this.queue.take() : undefined;
    if (after) {
      settles.push(after.settle);
      const judged = runJudged(writesOf([after]), this.store, batch, this.stale);
      ({ failure, stale } = judged);
      for (const mkey of judged.leftInMemory) leftInMemory.add(mkey);
    }
    // Invalidations older than every write still queued are forgotten.
    if (!this.hasPending) this.stale.prune(horizon);
    if (stale) {
      this.driver.exec('ROLLBACK');
      const message = failure === undefined ? 'the monitor was reloaded while this batch was queued' : (failure as Error).message;
      const error = new ClusterConflictError(new Set([...batch.touched, ...leftInMemory]), message, { cause: failure });
      this.track(this.finish(settle, error, leftInMemory));
      return;
    }
    if (failure !== undefined) {
      this.driver.exec('ROLLBACK');
      this.track(this.finish(settle, failure, batch.touched));
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
      if (!this.hasPending) return;
      // The next batch goes at the end of this turn, as any batch does (QueuedWrites), never at once:
      // - a request woken by this commit (a take-next that waited for work) queues its grant in this
      //   turn and then waits on settled(); taken at once, the grant was in flight by then, settled()
      //   gave the promise of the batch in flight, which settles whether the batch stood or not, and
      //   the request answered a grant PostgreSQL had refused: a second holder, with the same fence;
      // - a catch-up waiting for the replica to be free runs first, where flushing at once would keep
      //   it waiting for as long as writes keep coming (requests hung for 20 s and more).
      setImmediate(() => this.flush());
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
        if (touched.size > 0) await this.hooks.reload(touched);
      } catch (reloadError) {
        for (const mkey of touched) this.stale.refuseUntilReplaced(mkey);
        this.hooks.log(`vigil: cannot reload monitors from PostgreSQL (${(reloadError as Error).message}); they are reloaded before their next use`);
      }
      settle.reject(error);
      // Not a failure for good ('failed' is not told): the next batch tries PostgreSQL again.
      if (!isClusterConflict(error)) this.hooks.log(`vigil: a batch was not stored in PostgreSQL: ${(error as Error).message}`);
    }
  }

  /** The sealed writes first (they were queued before the others), else the queued batch. */
  private takeNext(): { batches: TakenBatch[]; sealed: boolean } | undefined {
    const sealed = this.sealed;
    if (sealed) {
      this.sealed = undefined;
      return { batches: sealed.batches, sealed: true };
    }
    const taken = this.queue.take();
    return taken && { batches: [taken], sealed: false };
  }
}

/** A batch's writes in the order they run: each taken batch's ordered writes, then its upserts. */
function writesOf(batches: readonly TakenBatch[]): Write[] {
  return batches.flatMap((b) => [...b.ordered, ...b.latest.values()]);
}
