// Latency histogram with 2% wide buckets: load processes record every
// request into one, the parent merges them and reads percentiles, so p99 is
// over all requests without shipping every sample between processes.
const growth = Math.log(1.02);
/** Latencies below this (ms) share the first bucket. */
const floorMs = 0.01;

export type Histogram = Record<number, number>;

export function record(histogram: Histogram, ms: number): void {
  const bucket = ms <= floorMs ? 0 : Math.ceil(Math.log(ms / floorMs) / growth);
  histogram[bucket] = (histogram[bucket] ?? 0) + 1;
}

export function merge(histograms: readonly Histogram[]): Histogram {
  const out: Histogram = {};
  for (const h of histograms) for (const [bucket, n] of Object.entries(h)) out[Number(bucket)] = (out[Number(bucket)] ?? 0) + n;
  return out;
}

/** The upper edge (ms) of the bucket holding the p-th percentile; NaN when empty. */
export function percentileOf(histogram: Histogram, p: number): number {
  const buckets = Object.keys(histogram).map(Number).sort((a, b) => a - b);
  const total = buckets.reduce((a, b) => a + histogram[b]!, 0);
  if (total === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * total);
  let seen = 0;
  for (const b of buckets) {
    seen += histogram[b]!;
    if (seen >= rank) return floorMs * Math.exp(b * growth);
  }
  return Number.NaN;
}
