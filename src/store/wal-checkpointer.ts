// Copies the state file's write-ahead log back into the database on a worker
// thread. SQLite's own automatic checkpoint runs inside the commit that takes
// the log past 1,000 pages: a stall of the event loop of 5–8 ms every few
// hundred publishes, which every request waiting then pays (bench/README.md).
import { Worker } from 'node:worker_threads';
import type { SqlDriver } from './sql-driver.ts';

/** At most one checkpoint asked for per this many ms; a busy server fills about 4 MB of log meanwhile. */
const askEveryMs = 250;
/** Past this many log frames (64 MB of 4 KB pages) the worker is not keeping up: the server checkpoints itself. */
const maxWalFrames = 16_384;
const workerUrl = new URL('./wal-checkpoint-worker.mjs', import.meta.url);

interface Reply {
  ok: boolean;
  walFrames?: number;
  copied?: number;
  error?: string;
}

export class WalCheckpointer {
  private worker: Worker | undefined;
  private asking = false;
  private lastAskedMs = 0;
  private stopped = false;

  /**
   * Only for a state file opened with better-sqlite3: a second copy of SQLite in
   * one process (node:sqlite beside it) would not share its POSIX locks.
   */
  static for(path: string, driver: SqlDriver): WalCheckpointer | undefined {
    if (driver.name !== 'better-sqlite3') return undefined;
    return new WalCheckpointer(path, driver);
  }

  private constructor(
    private readonly path: string,
    private readonly driver: SqlDriver,
  ) {
    driver.exec('PRAGMA wal_autocheckpoint = 0');
  }

  /** After a commit: asks the worker for a checkpoint, at most every 250 ms and one at a time. */
  committed(): void {
    if (this.stopped || this.asking) return;
    const now = Date.now();
    if (now - this.lastAskedMs < askEveryMs) return;
    this.lastAskedMs = now;
    this.asking = true;
    this.started().postMessage('checkpoint');
  }

  close(): void {
    this.stopped = true;
    this.worker?.postMessage('close');
    this.worker = undefined;
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(workerUrl, { workerData: { path: this.path } });
    // A checkpointer never keeps the process alive.
    worker.unref();
    worker.on('message', (reply: Reply) => this.replied(reply));
    worker.on('error', (error) => this.giveUp(error.message));
    this.worker = worker;
    return worker;
  }

  private replied(reply: Reply): void {
    this.asking = false;
    if (this.stopped) return;
    if (!reply.ok) {
      this.giveUp(reply.error ?? 'unknown error');
      return;
    }
    // The log only restarts from its beginning once everything in it was copied back.
    if ((reply.walFrames ?? 0) - (reply.copied ?? 0) > maxWalFrames) this.driver.exec('PRAGMA wal_checkpoint(PASSIVE)');
  }

  /** Back to SQLite's own checkpoints, on the server's thread. */
  private giveUp(reason: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.asking = false;
    void this.worker?.terminate();
    this.worker = undefined;
    process.emitWarning(`vigil: checkpointing ${this.path} on a worker thread failed (${reason}); SQLite checkpoints it on the server's thread from now on`);
    this.driver.exec('PRAGMA wal_autocheckpoint = 1000');
  }
}
