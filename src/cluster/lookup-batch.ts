// Lookups asked for during one event-loop turn answered by one query. Every
// request on a cluster node reads its monitor's rev first; under load that
// is one round trip per turn instead of one per request. A lookup is sent
// after the request that asked for it arrived, so it still sees every write
// acknowledged before that request was made.
export class LookupBatch<K, V> {
  private pending = new Map<K, Array<{ resolve: (value: V | undefined) => void; reject: (error: unknown) => void }>>();
  private scheduled = false;

  constructor(private readonly fetch: (keys: K[]) => Promise<Map<K, V>>) {}

  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    this.scheduled = false;
    try {
      const found = await this.fetch([...batch.keys()]);
      for (const [key, waiting] of batch) for (const w of waiting) w.resolve(found.get(key));
    } catch (error) {
      for (const waiting of batch.values()) for (const w of waiting) w.reject(error);
    }
  }
}
