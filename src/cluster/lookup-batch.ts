// Lookups answered by one query per round trip. A request on a cluster node
// reads its monitor's rev first (a publish on current memory does not): while
// one query is out, the lookups asked for meanwhile wait and go together in
// the next, so that under load there is one query per round trip rather than
// one per event-loop turn (each a write to the database's socket, the largest
// cost a request added). A lookup is still sent after the request that asked
// for it arrived, so it sees every write acknowledged before that request was
// made.
export class LookupBatch<K, V> {
  private pending = new Map<K, Array<{ resolve: (value: V | undefined) => void; reject: (error: unknown) => void }>>();
  private scheduled = false;
  private inFlight = false;

  constructor(private readonly fetch: (keys: K[]) => Promise<Map<K, V>>) {}

  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight || this.pending.size === 0) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    this.scheduled = false;
    this.inFlight = true;
    try {
      const found = await this.fetch([...batch.keys()]);
      for (const [key, waiting] of batch) for (const w of waiting) w.resolve(found.get(key));
    } catch (error) {
      for (const waiting of batch.values()) for (const w of waiting) w.reject(error);
    } finally {
      this.inFlight = false;
      this.schedule();
    }
  }
}
