// Coalesces stream writes: every sink that queued something during an
// event-loop turn is flushed once at the end of it, so a turn's writes become
// one socket write (runtime-facts.md: per-write syscalls dominate SSE fan-out).

export interface Flushable {
  flush(): void;
}

export class FlushScheduler<S extends Flushable> {
  private readonly dirty = new Set<S>();
  private scheduled = false;

  add(sink: S): void {
    this.dirty.add(sink);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const sinks = [...this.dirty];
      this.dirty.clear();
      for (const each of sinks) each.flush();
    });
  }
}
