// Which observations a sentinel recipe has already reacted to, read from the
// monitor's own `lease` observations: each completion carries evidence
// [{sentinel, run, seq}]. A sentinel reads this after claiming a subject, so
// every completion of that subject is already in the log; this is what lets
// several sentinel processes run exactly one reaction per observation.
import type { ProtocolClient, SubscriptionRef } from '../../server-client/protocol-client.ts';

const LEASE_TYPE = 'ai.vigil.monitor.lease';

export class DoneLog {
  private cursor = 1;
  private readonly done = new Set<number>();

  constructor(
    private readonly client: ProtocolClient,
    /** Observe-only (lease observations): safe to hand to a reaction for `vigil lease check`. */
    readonly sub: SubscriptionRef,
    private readonly sentinel: string,
  ) {}

  static readonly filter = { types: [LEASE_TYPE] };

  /** Reads completions written since the last call. */
  async catchUp(): Promise<void> {
    for (;;) {
      const page = await this.client.pull(this.sub, { cursor: this.cursor, wait: 0, limit: 1000 });
      for (const o of page.observations) {
        // The server keeps its bookkeeping under data.payload.
        const raw = o.data as { payload?: unknown } | undefined;
        const data = (raw?.payload ?? raw) as { action?: string; evidence?: unknown } | undefined;
        if (data?.action !== 'complete' || !Array.isArray(data.evidence)) continue;
        for (const e of data.evidence as Array<{ sentinel?: unknown; seq?: unknown }>) {
          if (e && e.sentinel === this.sentinel && typeof e.seq === 'number') this.done.add(e.seq);
        }
      }
      const moved = page.next > this.cursor;
      this.cursor = Math.max(this.cursor, page.next);
      if (!moved || page.observations.length < 1000) return;
    }
  }

  has(seq: number): boolean {
    return this.done.has(seq);
  }

  add(seq: number): void {
    this.done.add(seq);
  }

  /** Forgets seqs below the acknowledged cursor: they are never asked about again. */
  prune(below: number): void {
    for (const seq of this.done) if (seq < below) this.done.delete(seq);
  }
}
