// The writes queued for a commit batcher's next batch (group-commit.ts, and a cluster
// node's src/cluster/cluster-commit.ts): what is queued during one event-loop turn goes
// in one transaction at the end of it, and the requests that queued wait on its promise.

export type Write = () => void;

export interface Settle {
  resolve(): void;
  reject(error: unknown): void;
}

/** A batch taken for its transaction: ordered writes first, then the last upsert of each key. */
export interface TakenBatch {
  readonly ordered: readonly Write[];
  readonly latest: ReadonlyMap<string, Write>;
  readonly settle: Settle;
}

export class QueuedWrites {
  private ordered: Write[] = [];
  /** Row upserts: only the last write of a key in a batch matters. */
  private latest = new Map<string, Write>();
  private waiting: Promise<void> | undefined;
  private settle: Settle | undefined;

  /** `flush` runs at the end of the turn in which the first write of a batch was queued. */
  constructor(private readonly flush: () => void) {}

  /** Queues a write that must run in order with other ordered writes. */
  append(write: Write): void {
    this.ordered.push(write);
    this.schedule();
  }

  /** Queues a row upsert; a later put of the same key in this batch replaces it. */
  put(key: string, write: Write): void {
    this.latest.delete(key);
    this.latest.set(key, write);
    this.schedule();
  }

  /** Settles when the queued batch is stored or refused; undefined when nothing is queued. */
  get pending(): Promise<void> | undefined {
    return this.waiting;
  }

  /** Takes the queued batch for its transaction; undefined when nothing is queued. */
  take(): TakenBatch | undefined {
    const settle = this.settle;
    if (!settle) return undefined;
    const taken = { ordered: this.ordered, latest: this.latest, settle };
    this.ordered = [];
    this.latest = new Map();
    this.waiting = undefined;
    this.settle = undefined;
    return taken;
  }

  private schedule(): void {
    if (this.waiting) return;
    this.waiting = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // A rejected batch must not surface as an unhandled rejection when no request waits on it.
    this.waiting.catch(() => {});
    setImmediate(() => this.flush());
  }
}
