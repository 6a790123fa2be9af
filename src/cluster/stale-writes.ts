// Which queued writes of a cluster node were computed on memory that has been
// replaced since, and which monitors a refused batch leaves changed in memory.
//
// Every queued write is stamped. A monitor whose memory changed under the queue
// (a catch-up applied other nodes' rows) is invalidated at the current stamp: a
// write stamped before it, touching that monitor, is stale and its batch is
// refused. When the memory was replaced whole (reloaded, or dropped), what the
// stale write changed in memory went with it: refusing its batch needs no
// reload of that monitor. Reloading it anyway refused, in turn, whatever was
// queued during that reload (the expiries of the leases the previous reload had
// re-armed), and a node went on refusing and reloading one monitor for ever.
import type { CapturedBatch } from '../store/postgres/captured-batch.ts';
import type { Write } from '../store/queued-writes.ts';
import type { Store } from '../store/store.ts';

/** What running a batch's writes found. */
export interface Judged {
  /** The first write that threw. */
  readonly failure: unknown;
  /** A write was computed on memory replaced since it was queued: the batch lost a race. */
  readonly stale: boolean;
  /** Monitors whose memory still holds what the writes changed: reloaded when the batch is refused. */
  readonly leftInMemory: Set<number>;
}

export class StaleWrites {
  private next = 0;
  /** When each queued write was queued. */
  private readonly stamps = new WeakMap<Write, number>();
  /** Per monitor: the stamp of its last invalidation; writes stamped before it are stale. */
  private readonly invalidated = new Map<number, number>();
  /** Per monitor: the stamp at which its memory was last replaced whole. */
  private readonly replaced = new Map<number, number>();

  /** Stamps a write queued now. */
  stamp(write: Write): void {
    this.stamps.set(write, this.next++);
  }

  stampOf(write: Write): number {
    return this.stamps.get(write) ?? 0;
  }

  /** Writes queued so far were computed on memory of `mkey` that has changed (`whole`: been replaced whole). */
  invalidate(mkey: number, whole: boolean): void {
    if (whole) {
      this.invalidated.set(mkey, this.next);
      this.replaced.set(mkey, this.next);
    } else {
      this.invalidated.set(mkey, Math.max(this.invalidated.get(mkey) ?? 0, this.next));
    }
  }

  /** The monitor's reload failed: every write touching it is stale until its memory is replaced whole. */
  refuseUntilReplaced(mkey: number): void {
    this.invalidated.set(mkey, Number.POSITIVE_INFINITY);
  }

  /** The stamp the next write gets. */
  get current(): number {
    return this.next;
  }

  /** The monitors invalidated after the write stamped `stamp` was queued. */
  invalidatedAfter(stamp: number): number[] {
    return [...this.invalidated].filter(([, at]) => stamp < at).map(([mkey]) => mkey);
  }

  /** The write stamped `stamp` touching `mkey` was computed on memory of it that has changed since. */
  isStale(mkey: number, stamp: number): boolean {
    return stamp < (this.invalidated.get(mkey) ?? -1);
  }

  /** What the write stamped `stamp` changed in memory of `mkey` is still there (not replaced since). */
  leftInMemory(mkey: number, stamp: number): boolean {
    return stamp >= (this.replaced.get(mkey) ?? -1);
  }

  /** Forgets what no queued write is older than (`oldest`: the stamp of the oldest write still queued). */
  prune(oldest: number = this.next): void {
    for (const [mkey, at] of this.invalidated) if (at <= oldest) this.invalidated.delete(mkey);
    for (const [mkey, at] of this.replaced) if (at <= oldest) this.replaced.delete(mkey);
  }
}

/**
 * Runs queued writes into the replica's open transaction, capturing their rows into `batch`, and
 * judges them one by one: `stale` when one was computed on memory replaced since it was queued;
 * `leftInMemory`, the monitors whose memory still holds what the writes changed (reloaded when
 * the batch is refused). A write that throws does not stop the others from being judged.
 */
export function runJudged(writes: readonly Write[], store: Pick<Store, 'capture'>, batch: CapturedBatch, judge: StaleWrites): Judged {
  let failure: unknown;
  let stale = false;
  const leftInMemory = new Set<number>();
  try {
    for (const write of writes) {
      const stamp = judge.stampOf(write);
      const mkeys = new Set<number>();
      store.capture = (kind, mkey, params) => {
        mkeys.add(mkey);
        batch.add(kind, mkey, params);
      };
      try {
        write();
      } catch (error) {
        failure ??= error;
        if (!leavesTransactionOpen(error)) {
          // The rest cannot run to be judged: as before this judgement existed, every monitor the batch
          // touched or a reload replaced under it is reloaded, and the batch counts as a lost race if any was.
          const suspects = judge.invalidatedAfter(writes.reduce((oldest, w) => Math.min(oldest, judge.stampOf(w)), Number.POSITIVE_INFINITY));
          for (const mkey of [...batch.touched, ...suspects]) leftInMemory.add(mkey);
          return { failure, stale: stale || suspects.length > 0, leftInMemory };
        }
        // A row read from memory that a reload replaced under the queued write (a subscription created in a
        // refused batch) fails before naming its monitor: the same lost race, on whichever monitor it was.
        const suspects = mkeys.size === 0 ? judge.invalidatedAfter(stamp) : [];
        if (suspects.length > 0) stale = true;
        for (const mkey of suspects) leftInMemory.add(mkey);
      }
      for (const mkey of mkeys) {
        if (judge.isStale(mkey, stamp)) stale = true;
        if (judge.leftInMemory(mkey, stamp)) leftInMemory.add(mkey);
      }
    }
  } finally {
    store.capture = undefined;
  }
  return { failure, stale, leftInMemory };
}

/**
 * A write that failed in JavaScript (reading a row) or on a constraint (a seq computed on replaced
 * memory) leaves the replica's transaction open, so the writes after it can still be run and judged;
 * other SQLite failures may have ended the transaction.
 */
function leavesTransactionOpen(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return !/SQLITE/.test(String(code)) || /constraint/i.test(String(message));
}
