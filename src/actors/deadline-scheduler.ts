// One timer for many deadlines: actors that are not resident still have
// deadlines (mute, lease expiry); when one comes due, `wake` makes the actor
// resident again and its own machine decides what happens.
import type { Clock } from './clock.ts';

interface Entry {
  readonly dueMs: number;
  readonly key: string;
}

const minHeapToCompact = 1024;

export class DeadlineScheduler {
  private readonly heap: Entry[] = [];
  private readonly due = new Map<string, number>();
  private timer: unknown;
  private armedFor = Number.POSITIVE_INFINITY;
  private stopped = false;

  constructor(private readonly clock: Clock, private readonly wake: (key: string) => void) {}

  /** Wakes `key` at `dueMs` (replacing an earlier deadline for the same key). */
  at(key: string, dueMs: number): void {
    if (this.stopped) return;
    this.due.set(key, dueMs);
    this.push({ dueMs, key });
    // A moved deadline leaves its old entry in the heap until that entry's time:
    // keys moved often (open streams' subscriptions) would grow it without bound.
    if (this.heap.length > 2 * this.due.size + minHeapToCompact) this.compact();
    if (dueMs < this.armedFor) this.arm();
  }

  /** Drops the deadline of `key` (its entry is skipped when it comes up). */
  cancel(key: string): void {
    this.due.delete(key);
  }

  get size(): number {
    return this.due.size;
  }

  /** Entries the heap holds, superseded ones included: at most about twice `size`. */
  get held(): number {
    return this.heap.length;
  }

  stop(): void {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
  }

  private arm(): void {
    this.clock.clearTimeout(this.timer);
    const next = this.heap[0];
    if (!next) {
      this.armedFor = Number.POSITIVE_INFINITY;
      return;
    }
    this.armedFor = next.dueMs;
    this.timer = this.clock.setTimeout(() => this.fire(), Math.max(0, next.dueMs - this.clock.now()));
  }

  private fire(): void {
    const now = this.clock.now();
    while (this.heap[0] && this.heap[0].dueMs <= now) {
      const entry = this.pop()!;
      // A later `at` for the same key supersedes this entry.
      if (this.due.get(entry.key) !== entry.dueMs) continue;
      this.due.delete(entry.key);
      try {
        this.wake(entry.key);
      } catch (error) {
        process.emitWarning(`vigil: waking ${entry.key} failed: ${(error as Error).message}`);
      }
    }
    this.arm();
  }

  /** Rebuilds the heap from the deadlines that still stand. */
  private compact(): void {
    this.heap.length = 0;
    for (const [key, dueMs] of this.due) this.push({ dueMs, key });
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.dueMs <= entry.dueMs) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): Entry | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (!top || !last || heap.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.dueMs < heap[left]!.dueMs ? right : left;
      if (heap[child]!.dueMs >= last.dueMs) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
