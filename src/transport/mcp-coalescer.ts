// Coalesces bursts of "this changed" per key: the first change is passed on
// at once, later ones within the interval are folded into one trailing call,
// so a key fires at most once per interval and its last change is never lost.

export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class Coalescer {
  private readonly lastFired = new Map<string, number>();
  private readonly pending = new Map<string, unknown>();

  constructor(
    private readonly intervalMs: number,
    private readonly fire: (key: string) => void,
    private readonly timers: Timers = realTimers,
  ) {}

  /** Notes a change of `key`. */
  touch(key: string): void {
    if (this.pending.has(key)) return;
    const last = this.lastFired.get(key);
    const now = this.timers.now();
    if (last === undefined || now - last >= this.intervalMs) {
      this.emit(key);
      return;
    }
    const handle = this.timers.setTimeout(() => {
      this.pending.delete(key);
      this.emit(key);
    }, last + this.intervalMs - now);
    this.pending.set(key, handle);
  }

  /** Forgets `key`, dropping a trailing call that has not fired yet. */
  forget(key: string): void {
    const handle = this.pending.get(key);
    if (handle !== undefined) this.timers.clearTimeout(handle);
    this.pending.delete(key);
    this.lastFired.delete(key);
  }

  close(): void {
    for (const handle of this.pending.values()) this.timers.clearTimeout(handle);
    this.pending.clear();
    this.lastFired.clear();
  }

  private emit(key: string): void {
    this.lastFired.set(key, this.timers.now());
    this.fire(key);
  }
}
