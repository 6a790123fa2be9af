// The rows of one group commit as the SQLite store wrote them, grouped by
// monitor, so that the same batch can be written to PostgreSQL.
import type { CapturedKind } from '../store.ts';

export class CapturedBatch {
  readonly monitors = new Map<number, readonly unknown[]>();
  readonly observations: Array<readonly unknown[]> = [];
  readonly subjects: Array<readonly unknown[]> = [];
  readonly contradictions = new Set<number>();
  readonly subscriptions = new Map<string, readonly unknown[]>();
  readonly leases = new Map<string, readonly unknown[]>();
  readonly compactions: Array<readonly unknown[]> = [];
  /** Every monitor the batch touched: written, or only confirmed. */
  readonly touched = new Set<number>();
  /** Monitors the batch writes (their rev moves); the others in `touched` are only confirmed. */
  readonly written = new Set<number>();
  /** Ownership tokens the batch's timer and source writes were made under, per monitor (checked, not written). */
  readonly fences = new Map<number, number>();
  /** First and last seq appended per monitor. */
  readonly seqs = new Map<number, { first: number; last: number }>();

  add(kind: CapturedKind, mkey: number, params: readonly unknown[]): void {
    if (kind === 'fence') {
      this.fences.set(mkey, params[0] as number);
      return;
    }
    this.touched.add(mkey);
    if (kind === 'confirm') return;
    this.written.add(mkey);
    switch (kind) {
      case 'monitor':
        this.monitors.set(mkey, params);
        break;
      case 'observation': {
        this.observations.push(params);
        const seq = params[1] as number;
        const range = this.seqs.get(mkey);
        if (range) range.last = seq;
        else this.seqs.set(mkey, { first: seq, last: seq });
        break;
      }
      case 'subject':
        this.subjects.push(params);
        break;
      case 'contradiction':
        this.contradictions.add(mkey);
        break;
      case 'subscription':
        this.subscriptions.set(params[0] as string, params);
        break;
      case 'lease':
        this.leases.set(`${mkey}:${params[1] as string}`, params);
        break;
      case 'compact':
        this.compactions.push(params);
        break;
    }
  }

  get empty(): boolean {
    return this.touched.size === 0;
  }
}
