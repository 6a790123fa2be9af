// A live source's writes on a cluster: each is run like a request
// (ClusterNode.writeOn), in order, and a batch that lost a race to another
// node is applied again on the reloaded monitor. A source has no client to
// retry for it, so a write that still cannot be stored (PostgreSQL away, or
// other nodes winning every race for a while) stays queued and is tried
// again after a pause, while the monitor is active: what the source saw
// is not given up because the database was busy.
import { setTimeout as sleep } from 'node:timers/promises';
import { isClusterConflict } from '../store/cluster-conflict.ts';
import type { ClusterNodeHooks } from '../service/cluster-hooks.ts';

/** Writes waiting past this are the oldest dropped, each drop logged: a store away for hours must not grow memory without end. */
export const maxQueuedWrites = 10_000;
const firstPauseMs = 1_000;
const longestPauseMs = 30_000;

export interface ClusterWriteTarget {
  readonly mkey: number;
  /** Names the writer and the monitor in log lines: "the http source on monitor m-…". */
  describe(): string;
  /** False once the monitor is paused or retired, another node owns it, or the server closes: queued writes are no longer wanted. */
  wanted(): boolean;
  /** The server is closing (writes it drops then are a loss, and logged; a paused monitor's are not). */
  closing(): boolean;
  /** Resolves once every change applied so far is durable. */
  settle(): Promise<void>;
  log(line: string): void;
  /** Every queued write is stored (or no longer wanted). */
  idle(): void;
}

export class ClusterWrites {
  private queued: Array<() => void> = [];
  private draining = false;
  /** The cursor of the last queued write: a reload puts the stored one back in the stats until it is applied again. */
  private queuedCursor: { value: unknown } | undefined;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(
    private readonly cluster: ClusterNodeHooks,
    private readonly target: ClusterWriteTarget,
  ) {}

  /** Resolves once no write is queued or being stored (stored, or dropped as no longer wanted). */
  whenIdle(): Promise<void> {
    if (!this.draining && this.queued.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Writes are queued or being stored. */
  get busy(): boolean {
    return this.draining;
  }

  /** The cursor the source goes on from while writes are queued, else undefined (the stored one holds). */
  get pendingCursor(): { value: unknown } | undefined {
    return this.queuedCursor;
  }

  push(change: () => void, cursor?: unknown): void {
    this.queued.push(change);
    if (cursor !== undefined) this.queuedCursor = { value: cursor };
    const excess = this.queued.length - maxQueuedWrites;
    if (excess > 0) {
      this.queued.splice(0, excess);
      this.target.log(`vigil: dropped ${excess} write(s) of ${this.target.describe()}: more than ${maxQueuedWrites} were waiting to be stored`);
    }
    if (!this.draining) void this.drain();
  }

  /** The server closes: writes still waiting (say, out a pause) will not be stored; says how many. */
  abandon(): void {
    this.dropUnwanted();
  }

  private dropUnwanted(): void {
    if (this.queued.length === 0) return;
    if (this.target.closing()) this.target.log(`vigil: ${this.queued.length} write(s) of ${this.target.describe()} were not stored: the server closed first`);
    else this.target.log(`vigil: ${this.queued.length} write(s) of ${this.target.describe()} were not stored: this node no longer runs it (paused, retired, or another node took the monitor over and goes on from the stored cursor)`);
    this.queued = [];
  }

  private async drain(): Promise<void> {
    this.draining = true;
    let failures = 0;
    try {
      while (this.queued.length > 0) {
        if (!this.target.wanted()) return;
        const changes = this.queued.splice(0);
        const error = await this.cluster.writeOn(this.target.mkey, async () => {
          // Paused, retired or closing meanwhile: left for the check below (and the log, when closing).
          if (!this.target.wanted()) return void this.queued.unshift(...changes);
          for (const change of changes) change();
          await this.target.settle();
        });
        if (!error) {
          if (!this.target.wanted()) return;
          if (failures > 0) this.target.log(`vigil: the writes of ${this.target.describe()} are stored after ${failures} failed round(s)`);
          failures = 0;
          continue;
        }
        // Not stored, and no longer wanted here (another node owns the monitor now): dropped below.
        if (!this.target.wanted()) return;
        // Nothing of the batch was stored (its rows were rolled back with the monitor's reload): keep it first in line.
        this.queued.unshift(...changes);
        failures++;
        const pause = Math.min(longestPauseMs, firstPauseMs * 2 ** (failures - 1));
        this.target.log(
          `vigil: ${this.queued.length} write(s) of ${this.target.describe()} are not stored yet (${reason(error)}); they are kept and tried again in ${pause / 1000} s`,
        );
        // Unreferenced: a server shutting down does not wait out the pause.
        await sleep(pause, undefined, { ref: false });
      }
    } finally {
      if (!this.target.wanted()) this.dropUnwanted();
      if (this.queued.length === 0) this.queuedCursor = undefined;
      this.draining = false;
      this.target.idle();
      if (this.queued.length === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }
}

/** Why a write was not stored, for the log: the database's own words when it refused, without the advice meant for clients. */
function reason(error: Error): string {
  if (error.cause instanceof Error && !isClusterConflict(error.cause)) return error.cause.message;
  return error.message.replace(/\s*Try again\.$/, '');
}
