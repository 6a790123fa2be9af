// The time the triggers read and the timers they arm. The daemon takes it as
// an option so tests drive schedules with a fake clock instead of sleeping to
// a minute boundary.
import { type Clock, systemClock } from '../actors/clock.ts';

export type { Clock };
export { systemClock };

interface FakeTimer {
  id: number;
  due: number;
  callback: () => void;
}

/** A clock that moves only when the test says so; due timers fire in order of their time. */
export class FakeClock implements Clock {
  private timers: FakeTimer[] = [];
  private nextId = 1;
  constructor(private time: number) {}

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, delayMs: number): unknown {
    const timer = { id: this.nextId++, due: this.time + Math.max(0, delayMs), callback };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way (and timers they arm). */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      const next = this.timers.filter((t) => t.due <= end).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.time = Math.max(this.time, next.due);
      next.callback();
      // Let promise chains started by the callback settle before the next timer.
      await new Promise((r) => setImmediate(r));
    }
    this.time = end;
  }

  pending(): number {
    return this.timers.length;
  }
}
