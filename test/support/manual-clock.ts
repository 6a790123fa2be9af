// A clock a test moves by hand. The service takes a Clock
// (src/actors/clock.ts: its actors' timers, the deadline scheduler, waiting
// pulls, stream heartbeats) and the MCP coalescer takes the same shape, so a
// test about a rule or a timer (mute, lease expiry, residency, coalescing)
// runs in-process without waiting on the wall clock. Nothing fires until
// advance(): then every timer due by the new time fires in order, at its own
// time, and the work it starts is let run (`idle`) before the next fires.
import type { Clock } from '../../src/actors/clock.ts';

interface Timer {
  readonly id: number;
  readonly dueMs: number;
  readonly fire: () => void;
}

/** Lets promise chains and I/O callbacks started so far run. */
export const turns = async (count = 5): Promise<void> => {
  for (let i = 0; i < count; i++) await new Promise((done) => setImmediate(done));
};

export class ManualClock implements Clock {
  private nowMs: number;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();
  /** Awaited after each timer fires and at the end of advance(): the door sets it to the service's settle(). */
  idle: () => Promise<void> = () => turns();

  /** Starts at the wall clock's time, so that times it stamps read as today's. */
  constructor(startMs = Date.now()) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  setTimeout(fire: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { id, dueMs: this.nowMs + Math.max(0, Number.isFinite(delayMs) ? delayMs : 0), fire });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Timers armed and not yet fired. */
  get pending(): number {
    return this.timers.size;
  }

  /** When the next timer is due, or undefined when none is armed. */
  get nextDueMs(): number | undefined {
    return this.earliest(Number.POSITIVE_INFINITY)?.dueMs;
  }

  /** Moves time forward by `ms`, firing what falls due on the way, each at its own time. */
  async advance(ms: number): Promise<void> {
    const end = this.nowMs + ms;
    await this.idle();
    for (;;) {
      const next = this.earliest(end);
      if (!next) break;
      this.timers.delete(next.id);
      this.nowMs = Math.max(this.nowMs, next.dueMs);
      next.fire();
      await this.idle();
    }
    this.nowMs = end;
    await this.idle();
  }

  /** Moves time to `atMs` (never back). */
  advanceTo(atMs: number): Promise<void> {
    return this.advance(Math.max(0, atMs - this.nowMs));
  }

  private earliest(byMs: number): Timer | undefined {
    let found: Timer | undefined;
    for (const timer of this.timers.values()) {
      if (timer.dueMs <= byMs && (!found || timer.dueMs < found.dueMs || (timer.dueMs === found.dueMs && timer.id < found.id))) found = timer;
    }
    return found;
  }
}
