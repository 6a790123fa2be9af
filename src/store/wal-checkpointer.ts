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
/**
 * SQLite reuses the log from its start only when a write begins with every frame copied back, which
 * never happens while writes go on in every turn: the passive checkpoint always leaves the last turns'
 * frames (the log grew by 1.2 GB in 8 s of steady publishing). Once the log holds `restartAtBytes`
 * and a passive checkpoint left at most `restartWhenLeft` frames, the worker copies the
 * rest and restarts the log. It holds SQLite's write lock for those frames and one sync (3-33 ms,
 * median 21, measured under 10,000 publishes of 2 KB a second): the server's commits wait in memory
 * meanwhile (GroupCommit.holdUntil), so only their writers wait, not the event loop; a hold lasts at
 * most `longestHoldMs`, after which commits wait for the lock as before.
 */
const restartAtBytes = 64 * 2 ** 20;
const restartWhenLeft = 1_024;
/** SQLite's default page size, which the store keeps: one log frame holds one page. */
const pageBytes = 4096;
const longestHoldMs = 1_000;
const workerUrl = new URL('./wal-checkpoint-worker.mjs', import.meta.url);

/** Holds the server's commits until the promise settles (GroupCommit.holdUntil). */
export type HoldCommits = (released: Promise<unknown>) => void;

export interface LogRestart {
  /** Without it the log is never restarted by the worker (a commit would wait for its lock on the server's thread). */
  readonly holdCommits?: HoldCommits | undefined;
  readonly restartBytes?: number | undefined;
}

interface Reply {
  ok: boolean;
  walFrames?: number;
  copied?: number;
  /** The answer to 'restart': whether the log was restarted. */
  restarted?: boolean;
  error?: string;
}

export class WalCheckpointer {
  private worker: Worker | undefined;
  private asking = false;
  /** Settles the hold on the server's commits when the worker answers 'restart'. */
  private releaseCommits: (() => void) | undefined;
  private lastAskedMs = 0;
  private stopped = false;

  /**
   * Only for a state file opened with better-sqlite3: a second copy of SQLite in
   * one process (node:sqlite beside it) would not share its POSIX locks.
   */
  static for(path: string, driver: SqlDriver, restart: LogRestart = {}): WalCheckpointer | undefined {
    if (driver.name !== 'better-sqlite3') return undefined;
    return new WalCheckpointer(path, driver, restart.holdCommits, restart.restartBytes ?? restartAtBytes);
  }

  private constructor(
    private readonly path: string,
    private readonly driver: SqlDriver,
    private readonly holdCommits: HoldCommits | undefined,
    private readonly restartBytes: number,
  ) {
    driver.exec('PRAGMA wal_autocheckpoint = 0');
    // The log restarted from its beginning is cut to this size by the next write, and reused in place up to it.
    driver.exec(`PRAGMA journal_size_limit = ${restartBytes}`);
  }

  /** After a commit: asks the worker for a checkpoint, at most every 250 ms and one at a time. */
  committed(): void {
    if (this.stopped || this.asking) return;
    const now = Date.now();
    if (now - this.lastAskedMs < askEveryMs) return;
    this.lastAskedMs = now;
    this.ask('checkpoint');
  }

  private ask(what: 'checkpoint' | 'restart'): void {
    this.asking = true;
    this.started().postMessage(what);
  }

  close(): void {
    this.stopped = true;
    this.release();
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
    worker.on('exit', (code) => this.giveUp(`the worker exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private replied(reply: Reply): void {
    this.asking = false;
    this.release();
    if (this.stopped) return;
    if (!reply.ok) {
      this.giveUp(reply.error ?? 'unknown error');
      return;
    }
    if (reply.restarted !== undefined) return;
    const frames = reply.walFrames ?? 0;
    const left = frames - (reply.copied ?? 0);
    // The log only restarts from its beginning once everything in it was copied back.
    if (left > maxWalFrames) this.driver.exec('PRAGMA wal_checkpoint(PASSIVE)');
    else if (this.holdCommits && frames * pageBytes >= this.restartBytes) {
      // Each passive checkpoint leaves what was written while it ran: chased at once, that shrinks
      // to a few turns' frames, and the hold of the restart to about one sync.
      if (left <= restartWhenLeft) this.restart(this.holdCommits);
      else this.ask('checkpoint');
    }
  }

  /** Restarts the log on the worker while the server's commits wait in memory (they need its write lock). */
  private restart(holdCommits: HoldCommits): void {
    holdCommits(
      new Promise<void>((resolve) => {
        const longest = setTimeout(resolve, longestHoldMs);
        longest.unref();
        this.releaseCommits = () => {
          clearTimeout(longest);
          resolve();
        };
      }),
    );
    this.ask('restart');
  }

  private release(): void {
    const release = this.releaseCommits;
    this.releaseCommits = undefined;
    release?.();
  }

  /** Back to SQLite's own checkpoints, on the server's thread. */
  private giveUp(reason: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.asking = false;
    this.release();
    void this.worker?.terminate();
    this.worker = undefined;
    process.emitWarning(`vigil: checkpointing ${this.path} on a worker thread failed (${reason}); SQLite checkpoints it on the server's thread from now on`);
    this.driver.exec('PRAGMA wal_autocheckpoint = 1000');
  }
}
