// What the fan-out threads and the publisher report (stream-thread.ts,
// publish-thread.ts), and the per-event arrival aggregates both sides keep.

/** One publish as the publisher saw it. */
export interface Published {
  /** The seq the server answered, or null when refused or unanswered. */
  seq: number | null;
  send: number;
  answer: number;
  status: number;
  code?: string;
}

/** First and last arrival and deliveries per seq, from `base` on, growing as needed. */
export class Arrivals {
  first = new Float64Array(1024).fill(Number.POSITIVE_INFINITY);
  last = new Float64Array(1024);
  count = new Int32Array(1024);

  constructor(readonly base: number) {}

  record(seq: number, at: number): void {
    const i = seq - this.base;
    if (i < 0) return;
    if (i >= this.count.length) this.grow(i + 1);
    if (at < this.first[i]!) this.first[i] = at;
    if (at > this.last[i]!) this.last[i] = at;
    this.count[i]!++;
  }

  merge(seq: number, first: number, last: number, count: number): void {
    const i = seq - this.base;
    if (i < 0) return;
    if (i >= this.count.length) this.grow(i + 1);
    if (first < this.first[i]!) this.first[i] = first;
    if (last > this.last[i]!) this.last[i] = last;
    this.count[i]! += count;
  }

  private grow(size: number): void {
    let n = this.count.length;
    while (n < size) n *= 2;
    const first = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
    first.set(this.first);
    const last = new Float64Array(n);
    last.set(this.last);
    const count = new Int32Array(n);
    count.set(this.count);
    this.first = first;
    this.last = last;
    this.count = count;
  }
}

/** A stream that did not get an event exactly once. */
export interface StreamOffence {
  kind: 'lost' | 'duplicated';
  stream: number;
  subscription: string;
  seq: number;
  /** How many times it arrived (0 when lost). */
  times: number;
  /** Published before the reconnect storm, or after it began. */
  phase: 'before' | 'after';
}

export interface StreamJudgement {
  type: 'judged';
  thread: number;
  /** Per phase: events a stream skipped (a later event arrived, this one never did), and extra arrivals. */
  lost: { before: number; after: number };
  duplicated: { before: number; after: number };
  /** Events after the last one a stream received, when the run ended: on streams that were open, and on streams not back. */
  undelivered: { open: number; away: number; streamsAway: number };
  offences: StreamOffence[];
}
