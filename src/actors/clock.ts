// The clock actors and services read time from and schedule timers on. It is
// an option everywhere so that tests can control time.

import type { Clock } from '../timing/clock.ts';

export type { Clock };

/** setTimeout fires at once for delays above 2^31-1 ms; long delays are re-armed in steps (and a timer that fired early, again). */
const maxTimerDelay = 2 ** 31 - 1;

class LongTimer {
  private handle: ReturnType<typeof setTimeout> | undefined;
  constructor(private readonly callback: () => void, private readonly dueMs: number) {
    this.arm();
  }
  private arm(): void {
    const remaining = this.dueMs - Date.now();
    if (remaining <= maxTimerDelay) {
      // Node starts a timer from the event loop's cached time, which a long turn leaves behind the
      // wall clock: such a timer fires before its due time by Date.now() (a lease expiry was recorded
      // before the lease's end on a loaded machine). Early, it waits out the rest.
      this.handle = setTimeout(() => (Date.now() >= this.dueMs ? this.callback() : this.arm()), Math.max(0, remaining));
    } else {
      this.handle = setTimeout(() => this.arm(), maxTimerDelay);
    }
    this.handle.unref?.();
  }
  cancel(): void {
    clearTimeout(this.handle);
  }
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => new LongTimer(callback, Date.now() + delayMs),
  clearTimeout: (handle) => (handle as LongTimer | undefined)?.cancel(),
};
