// What the main thread adds up of a lease run as the threads' batches come
// in: latency per operation, outcomes, the series over time, grants per
// client, and a bounded sample of holds for the report's timeline.
import { type Histogram, histogramOf, mergeInto } from './histogram.ts';
import { endedOk, type Hold, type LeaseBatch, type NodeTally, nodeTally, seriesStepMs } from './lease-records.ts';

/** Holds kept per sampled subject, and in all, for the timeline. */
const perSubject = 400;
const sampleTotal = 3000;

export class LeaseTally {
  readonly latency: Record<string, Histogram> = {};
  readonly outcomes: Record<string, number> = {};
  readonly requests: number[] = [];
  readonly refused: number[] = [];
  readonly grantSeries: number[] = [];
  readonly endedSeries: number[] = [];
  readonly grantsPerClient: number[];
  grants = 0;
  readonly ended = { complete: 0, release: 0, reject: 0 };
  crashes = 0;
  stalls = 0;
  lost = 0;
  /** Ends refused LEASE_LOST (the holder was too late), by operation. */
  readonly lateRefused = { complete: 0, release: 0, reject: 0 };
  /** Ends that got no answer at all. */
  unanswered = 0;
  /** Per node (index in --base). */
  readonly nodes: NodeTally[] = [];
  /** Holds kept for the timeline, by subject. */
  readonly timeline = new Map<string, Hold[]>();
  private sampled = 0;

  constructor(
    clients: number,
    private readonly startMs: number,
    /** Subjects whose holds the timeline keeps; undefined: the first holds of any subject. */
    private readonly sample: ReadonlySet<string> | undefined,
  ) {
    this.grantsPerClient = new Array(clients).fill(0);
  }

  add(batch: LeaseBatch): void {
    for (const [op, h] of Object.entries(batch.latency)) mergeInto(histogramOf(this.latency, op), h!);
    for (const [key, n] of Object.entries(batch.outcomes)) this.outcomes[key] = (this.outcomes[key] ?? 0) + n;
    addSeries(this.requests, batch.requestSeries);
    addSeries(this.refused, batch.refusedSeries);
    for (const [i, n] of Object.entries(batch.nodes)) {
      const into = nodeTally(this.nodes, Number(i));
      mergeInto(into.latency, n.latency);
      into.refused += n.refused;
      into.unanswered += n.unanswered;
    }
    for (const hold of batch.holds) this.hold(hold);
  }

  private hold(hold: Hold): void {
    this.grants++;
    this.grantsPerClient[hold.client] = (this.grantsPerClient[hold.client] ?? 0) + 1;
    bump(this.grantSeries, this.step(hold.grant.answer));
    if (hold.crashedAt !== undefined) this.crashes++;
    if (hold.stalled) this.stalls++;
    if (hold.lost) this.lost++;
    const end = hold.end;
    if (end && endedOk(hold)) {
      this.ended[end.op as 'complete']++;
      bump(this.endedSeries, this.step(end.answer));
    } else if (end?.code === 'LEASE_LOST') this.lateRefused[end.op as 'complete']++;
    else if (end && end.status === 0) this.unanswered++;
    this.keepForTimeline(hold);
  }

  keepForTimeline(hold: Hold): void {
    if (this.sample && !this.sample.has(hold.subject)) return;
    if (!this.sample && this.sampled >= sampleTotal) return;
    const list = this.timeline.get(hold.subject) ?? [];
    if (list.length >= perSubject || list.includes(hold)) return;
    list.push(hold);
    this.timeline.set(hold.subject, list);
    this.sampled++;
  }

  private step(t: number): number {
    return Math.max(0, Math.floor((t - this.startMs) / seriesStepMs));
  }
}

function bump(series: number[], i: number): void {
  while (series.length <= i) series.push(0);
  series[i]!++;
}

function addSeries(series: number[], counts: Record<number, number>): void {
  for (const [i, n] of Object.entries(counts)) {
    const at = Math.max(0, Number(i));
    while (series.length <= at) series.push(0);
    series[at]! += n;
  }
}

/** Jain's fairness index of the grants per client: 1 when every client got as many, 1/n when one got all. */
export function jain(values: readonly number[]): number {
  const sum = values.reduce((a, b) => a + b, 0);
  const squares = values.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? Number.NaN : (sum * sum) / (values.length * squares);
}
