// Small helpers for figures: percentiles, rounding, wall-clock time in ms with
// sub-millisecond precision that is comparable between processes.

/** Milliseconds since the epoch, with the precision of performance.now(). */
export const nowMs = (): number => performance.timeOrigin + performance.now();

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function summary(samples: readonly number[]): { p50: number; p99: number; max: number; n: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN, n: sorted.length };
}

export const round = (value: number, digits = 0): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
