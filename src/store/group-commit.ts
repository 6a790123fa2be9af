// Group commit: every write queued during one event-loop turn is applied in
// one transaction at the end of the turn, and every request that queued (or
// read) something waits for that transaction before it is answered. Under
// load that is one commit for many requests, never one per request.
import { Listeners } from '../events/listeners.ts';
import { QueuedWrites, type Write } from './queued-writes.ts';
import type { SqlDriver, SqlStatement } from './sql-driver.ts';

/** What a commit batcher (this one, or a cluster node's src/cluster/cluster-commit.ts) tells its listeners. */
export interface CommitListener {
  /** A batch committed; a cluster node's batch names the head it stored per monitor key. */
  committed: (heads?: ReadonlyMap<number, number>) => void;
  /** The first commit failed: nothing more is written (a cluster node never fails for good). */
  failed: (error: unknown) => void;
}

const noParams: readonly unknown[] = [];

export class GroupCommit {
  private readonly queue = new QueuedWrites(() => this.flushUnlessHeld());
  private failure: unknown;
  /** While set, batches wait in memory instead of committing: see holdUntil. */
  private held: Promise<unknown> | undefined;
  private readonly listeners = new Listeners<CommitListener>();

  // Prepared once: exec() parses its SQL on every call, twice per commit.
  private readonly begin: SqlStatement;
  private readonly commit: SqlStatement;

  constructor(private readonly driver: SqlDriver) {
    this.begin = driver.prepare('BEGIN IMMEDIATE');
    this.commit = driver.prepare('COMMIT');
  }

  /** Queues a write that must run in order with other ordered writes. */
  append(write: Write): void {
    this.queue.append(write);
  }

  /** Queues a row upsert; a later put of the same key in this batch replaces it. */
  put(key: string, write: Write): void {
    this.queue.put(key, write);
  }

  /** Resolves when everything queued so far is committed (at once when nothing is queued). */
  settled(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return this.queue.pending ?? Promise.resolve();
  }

  get hasPending(): boolean {
    return this.queue.pending !== undefined;
  }

  /** The store failed to commit earlier: the reason, so that writes can be refused. */
  get failed(): unknown {
    return this.failure;
  }

  on<E extends keyof CommitListener>(event: E, listener: CommitListener[E]): () => void {
    return this.listeners.on(event, listener);
  }

  off<E extends keyof CommitListener>(event: E, listener: CommitListener[E]): void {
    this.listeners.off(event, listener);
  }

  /**
   * Commits nothing until `released` settles; what is queued meanwhile waits in memory and commits
   * then, as one batch. For the moment the write-ahead log is emptied by another connection
   * (wal-checkpointer.ts): a commit would wait for its lock on the server's thread, stalling every
   * request, where a held batch only makes its own writers wait. `flush` (shutdown) does not wait.
   */
  holdUntil(released: Promise<unknown>): void {
    const hold = released.then(
      () => {},
      () => {},
    );
    this.held = hold;
    void hold.then(() => {
      if (this.held !== hold) return;
      this.held = undefined;
      this.flush();
    });
  }

  private flushUnlessHeld(): void {
    if (!this.held) this.flush();
  }

  /** Applies the queued writes now (also used on shutdown). */
  flush(): void {
    const taken = this.queue.take();
    if (!taken) return;
    const { ordered, latest, settle } = taken;
    // After a failed commit the service's memory is ahead of the file: storing
    // later batches would leave gaps (seqs that were never stored), so nothing
    // more is written until the server restarts from the file.
    if (this.failure) {
      settle.reject(this.failure);
      return;
    }
    try {
      this.begin.run(noParams);
      try {
        for (const write of ordered) write();
        for (const write of latest.values()) write();
        this.commit.run(noParams);
      } catch (error) {
        try {
          this.driver.exec('ROLLBACK');
        } catch {
          // SQLite already rolled back (e.g. on SQLITE_FULL); the first error is the one to report.
        }
        throw error;
      }
    } catch (error) {
      this.failure = error;
      settle.reject(error);
      this.listeners.emit('failed', error);
      return;
    }
    settle.resolve();
    this.listeners.emit('committed');
  }
}
