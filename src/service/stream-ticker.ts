// One timer for the periodic work of every open event stream: heartbeats when
// idle, and the activity that keeps a stream's subscription from mute
// retirement. A timer per stream (a Timeout, its wrapper and its closure,
// twice) cost more memory than the rest of the stream (bench/README.md).
import type { Clock } from '../actors/clock.ts';

export interface Ticking {
  tick(now: number): void;
}

/** How often open streams are looked at: a heartbeat or an activity record comes at most this much late. */
export function tickPeriodMs(heartbeatMs: number): number {
  return Math.max(20, Math.min(250, Math.floor(heartbeatMs / 4)));
}

export class StreamTicker {
  private readonly streams = new Set<Ticking>();
  private timer: unknown;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly periodMs: number,
  ) {}

  add(stream: Ticking): void {
    if (this.stopped) return;
    this.streams.add(stream);
    if (this.timer === undefined) this.arm();
  }

  delete(stream: Ticking): void {
    this.streams.delete(stream);
  }

  stop(): void {
    this.stopped = true;
    this.streams.clear();
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    this.timer = this.clock.setTimeout(() => this.fire(), this.periodMs);
  }

  private fire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    // A stream that closes during its tick leaves the set; deleting while iterating a Set is safe.
    for (const stream of this.streams) {
      try {
        stream.tick(now);
      } catch (error) {
        process.emitWarning(`vigil: an event stream's periodic work failed: ${(error as Error).message}`);
      }
    }
    if (this.streams.size > 0 && !this.stopped) this.arm();
  }
}
