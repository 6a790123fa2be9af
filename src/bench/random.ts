// Seeded randomness: each client of a run draws from its own generator,
// seeded from the run's seed and the client's number, so that `--compare`
// replays the same choices against a second server. The subject samplers
// implement --skew.

/** sfc32 (Chris Doty-Humphrey's small fast counter), seeded through splitmix32. */
export function generator(seed: number, stream: number): () => number {
  let s = (seed ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0;
  const split = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split();
  let b = split();
  let c = split();
  let d = split();
  return () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

/** How claims spread over the subjects (`--skew`). */
export type Skew = { kind: 'uniform' } | { kind: 'zipf'; s: number } | { kind: 'hot'; fraction: number };

/** A function from a uniform draw in [0, 1) to a subject index in [0, subjects). */
export type Sampler = (u: number, v: number) => number;

export function sampler(skew: Skew, subjects: number): Sampler {
  if (skew.kind === 'uniform') return (u) => Math.min(subjects - 1, Math.floor(u * subjects));
  if (skew.kind === 'hot') {
    // A fraction of the claims go to subject 0; the rest spread evenly over all subjects.
    const { fraction } = skew;
    return (u, v) => (u < fraction ? 0 : Math.min(subjects - 1, Math.floor(v * subjects)));
  }
  // Zipf: subject k (from 0) is drawn with weight 1 / (k + 1)^s.
  const cdf = new Float64Array(subjects);
  let total = 0;
  for (let k = 0; k < subjects; k++) {
    total += 1 / (k + 1) ** skew.s;
    cdf[k] = total;
  }
  return (u) => {
    const target = u * total;
    let lo = 0;
    let hi = subjects - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! <= target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export function describeSkew(skew: Skew): string {
  if (skew.kind === 'uniform') return 'uniform';
  if (skew.kind === 'zipf') return `zipf:${skew.s}`;
  return `hot:${skew.fraction}`;
}
