// Latency histograms with 1%-wide buckets: the worker threads record every
// request into their own and send them over, the main thread merges them, so
// a p99.9 is over every request without shipping every sample. The exact
// largest value is kept beside the buckets.

const growth = Math.log(1.01);
/** Latencies below this (ms) share the first bucket. */
const floorMs = 0.01;

export interface Histogram {
  /** bucket → count */
  buckets: Record<number, number>;
  count: number;
  max: number;
  sum: number;
}

export const emptyHistogram = (): Histogram => ({ buckets: {}, count: 0, max: 0, sum: 0 });

/** The histogram under `key`, made empty on first use. */
export function histogramOf(table: Record<string, Histogram>, key: string): Histogram {
  let h = table[key];
  if (!h) {
    h = emptyHistogram();
    table[key] = h;
  }
  return h;
}

export function record(h: Histogram, ms: number): void {
  const value = Math.max(0, ms);
  const bucket = value <= floorMs ? 0 : Math.ceil(Math.log(value / floorMs) / growth);
  h.buckets[bucket] = (h.buckets[bucket] ?? 0) + 1;
  h.count++;
  h.sum += value;
  if (value > h.max) h.max = value;
}

export function mergeInto(into: Histogram, from: Histogram): void {
  for (const [bucket, n] of Object.entries(from.buckets)) into.buckets[Number(bucket)] = (into.buckets[Number(bucket)] ?? 0) + n;
  into.count += from.count;
  into.sum += from.sum;
  if (from.max > into.max) into.max = from.max;
}

/** The upper edge (ms) of the bucket holding the p-th percentile (never above the largest value); NaN when empty. */
export function percentile(h: Histogram, p: number): number {
  if (h.count === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * h.count));
  const buckets = Object.keys(h.buckets)
    .map(Number)
    .sort((a, b) => a - b);
  let seen = 0;
  for (const b of buckets) {
    seen += h.buckets[b]!;
    if (seen >= rank) return Math.min(h.max, floorMs * Math.exp(b * growth));
  }
  return h.max;
}

/** Bucket edges and counts, for drawing: [lower edge ms, upper edge ms, count]. */
export function bars(h: Histogram): Array<[number, number, number]> {
  return Object.keys(h.buckets)
    .map(Number)
    .sort((a, b) => a - b)
    .map((b) => [b === 0 ? 0 : floorMs * Math.exp((b - 1) * growth), floorMs * Math.exp(b * growth), h.buckets[b]!]);
}

export interface Percentiles {
  n: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

export function percentiles(h: Histogram): Percentiles {
  return { n: h.count, p50: percentile(h, 50), p99: percentile(h, 99), p999: percentile(h, 99.9), max: h.count ? h.max : Number.NaN };
}
