// The counters of a budget scope in shared memory. Every step's stream reader
// (in a pool worker thread) adds the usage of each message as it reads it to
// the counters of its step and of every run around it, and checks their
// limits there and then: the agent is killed by the reader that saw the
// message cross a limit, without a round trip through the main thread, and
// parallel children share one run's counters. Dollars are kept in
// nano-dollars so that every thread adds exactly.

import type { UsageReport } from '../pool/step-task.ts';
import type { Budget } from '../types.ts';

export interface PriceTable {
  [model: string]: { input_per_mtok: number; output_per_mtok: number; cache_read_per_mtok?: number; cache_write_per_mtok?: number };
}

export interface BudgetReached {
  /** Which limit: usd, tokens or minutes. */
  limit: keyof Budget;
  /** The limit and the usage that reached it. */
  allowed: number;
  used: number;
  /** The scope whose limit it was: `run <id>` or `step <label> of run <id>`. */
  scope: string;
  /** Set when a usd limit was stopped because usage could not be priced: why. */
  uncounted?: string;
}

/** A scope's counters as a task carries them to a worker (a SharedArrayBuffer is shared, not copied). */
export interface MeterRef {
  buffer: SharedArrayBuffer;
  /** The scope, in messages: `run <id> ("<recipe>")` or `step "<label>" of run <id>`. */
  scope: string;
}

const INPUT = 0;
const OUTPUT = 1;
const NANO_USD = 2;
const USD_UNKNOWN = 3;
const TOKEN_LIMIT = 4;
const NANO_USD_LIMIT = 5;
const SLOTS = 6;
const NONE = -1n;

export const NANO = 1_000_000_000;
/**
 * The most one report (or limit) counts: a budget's maxima (common.schema.json). A figure beyond them (an agent
 * printing 1e30 tokens, or $1e300) is counted as this much, which crosses every budget, instead of wrapping a
 * 64-bit counter to a negative sum or failing to convert; thousands of such reports still fit in one.
 */
const MOST_TOKENS = 1e15;
const MOST_USD = 1e9;
/** `n` with its size held to `most` (a reconciliation's correction may be negative). */
const held = (n: number, most: number): number => (Number.isNaN(n) ? 0 : Math.sign(n) * Math.min(Math.abs(n), most));
const tokensOf = (n: number): bigint => BigInt(Math.round(held(n, MOST_TOKENS)));

export function toNano(usd: number): bigint {
  return BigInt(Math.round(held(usd, MOST_USD) * NANO));
}

function fromNano(nano: bigint): number {
  return Math.round(Number(nano) / 1000) / 1e6;
}

export function newMeter(scope: string, limits: { tokens?: number | undefined; usd?: number | undefined } | undefined): MeterRef {
  const buffer = new SharedArrayBuffer(SLOTS * 8);
  const cells = new BigInt64Array(buffer);
  cells[TOKEN_LIMIT] = limits?.tokens !== undefined ? tokensOf(Math.ceil(limits.tokens)) : NONE;
  cells[NANO_USD_LIMIT] = limits?.usd !== undefined ? toNano(limits.usd) : NONE;
  return { buffer, scope };
}

export interface MeterReading {
  input_tokens: number;
  output_tokens: number;
  usd: number;
  usd_unknown?: true;
}

export function readMeter(ref: MeterRef): MeterReading {
  const c = new BigInt64Array(ref.buffer);
  const usd_unknown = Atomics.load(c, USD_UNKNOWN) !== 0n;
  return {
    input_tokens: Number(Atomics.load(c, INPUT)),
    output_tokens: Number(Atomics.load(c, OUTPUT)),
    usd: fromNano(Atomics.load(c, NANO_USD)),
    ...(usd_unknown ? { usd_unknown: true as const } : {}),
  };
}

/** The first limit of this scope its counters reach (tokens and usd; minutes are the main thread's timer). */
export function meterReached(ref: MeterRef): BudgetReached | null {
  const c = new BigInt64Array(ref.buffer);
  const usdLimit = c[NANO_USD_LIMIT]!;
  const tokenLimit = c[TOKEN_LIMIT]!;
  const nano = Atomics.load(c, NANO_USD);
  const tokens = Atomics.load(c, INPUT) + Atomics.load(c, OUTPUT);
  if (usdLimit !== NONE && Atomics.load(c, USD_UNKNOWN) !== 0n)
    return { limit: 'usd', allowed: fromNano(usdLimit), used: fromNano(nano), scope: ref.scope, uncounted: 'some usage has no price' };
  if (usdLimit !== NONE && nano >= usdLimit) return { limit: 'usd', allowed: fromNano(usdLimit), used: fromNano(nano), scope: ref.scope };
  if (tokenLimit !== NONE && tokens >= tokenLimit) return { limit: 'tokens', allowed: Number(tokenLimit), used: Number(tokens), scope: ref.scope };
  return null;
}

/** Adds usage to the counters of a scope (tokens and nano-dollars may be negative: a reconciliation). */
export function addToMeter(ref: MeterRef, delta: { input_tokens: number; output_tokens: number; nanoUsd: bigint; unknown: boolean }): void {
  const c = new BigInt64Array(ref.buffer);
  Atomics.add(c, INPUT, tokensOf(delta.input_tokens));
  Atomics.add(c, OUTPUT, tokensOf(delta.output_tokens));
  Atomics.add(c, NANO_USD, delta.nanoUsd);
  if (delta.unknown) Atomics.store(c, USD_UNKNOWN, 1n);
}

/** Dollars of a report: its own figure when the backend gave one, else priced from vigil.yml `prices`; null when neither knows. */
export function priceOf(report: UsageReport, prices: PriceTable | undefined): number | null {
  if (report.usd !== null) return report.usd;
  const price = report.model ? prices?.[report.model] : undefined;
  if (!price) return null;
  // Cached input is priced apart when vigil.yml says how (a cache read costs a tenth of input at Anthropic).
  const read = report.cache_read_tokens ?? 0;
  const written = report.cache_write_tokens ?? 0;
  const fresh = report.input_tokens - read - written;
  const input = fresh * price.input_per_mtok + read * (price.cache_read_per_mtok ?? price.input_per_mtok) + written * (price.cache_write_per_mtok ?? price.input_per_mtok);
  return (input + report.output_tokens * price.output_per_mtok) / 1_000_000;
}

/**
 * Counts one report in every scope of a step (the step's own first, then each run around it) and
 * returns the first limit it reached, innermost first. A report without a price makes usd unknown,
 * unless the backend will report the cost itself later (`usd_later`): then it counts $0 until then.
 */
export function meterReport(refs: MeterRef[], report: UsageReport, prices: PriceTable | undefined): BudgetReached | null {
  const usd = priceOf(report, prices);
  const delta = { input_tokens: report.input_tokens, output_tokens: report.output_tokens, nanoUsd: usd === null ? 0n : toNano(usd), unknown: usd === null && !report.usd_later };
  for (const ref of refs) addToMeter(ref, delta);
  for (const ref of refs) {
    const hit = meterReached(ref);
    if (hit) return hit.uncounted ? { ...hit, uncounted: (report.unpriced_why ?? unpricedWhy(report.model)) } : hit;
  }
  return null;
}

/** Why usage of `model` has no price. */
export function unpricedWhy(model: string | null | undefined): string {
  return model
    ? `the backend reports no cost and vigil.yml has no prices entry for model "${model}" (prices: {${model}: {input_per_mtok, output_per_mtok}})`
    : 'the backend reports no cost and names no model to price from vigil.yml prices (set the step\'s "model")';
}

export function describeReached(r: BudgetReached): string {
  if (r.uncounted) return `budget cannot be kept: ${r.scope} has a usd limit of $${r.allowed}, but ${r.uncounted}`;
  const unit = r.limit === 'usd' ? ['$', ''] : r.limit === 'tokens' ? ['', ' tokens'] : ['', ' minutes'];
  return `budget reached: ${r.scope} used ${unit[0]}${r.used}${unit[1]} of ${unit[0]}${r.allowed}${unit[1]} (${r.limit})`;
}
