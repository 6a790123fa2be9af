// What a bench run does, as plain data, and the checks that turn command-line
// text into it. Every bad value is refused with a message naming the flag and
// what it allows (BenchUsageError; the CLI exits 2 on it).
import { availableParallelism } from 'node:os';
import type { Skew } from './random.ts';

export class BenchUsageError extends Error {
  override readonly name = 'UsageError';
}

/** What every scenario shares. */
export interface TargetSpec {
  /** Protocol roots (…/mp/v0); clients are spread over them in turn. */
  bases: string[];
  /** Bearer for creating the monitor on a server that requires registration. */
  registrationToken?: string;
  /** Use this existing monitor (with --owner-token) instead of creating one. */
  monitor?: string;
  ownerToken?: string;
  /** Leave the monitor the run created (it is retired otherwise). */
  keep: boolean;
  threads: number;
  timeoutMs: number;
  seed: number;
}

export type LeaseMode = 'named' | 'next';

export interface LeaseSpec extends TargetSpec {
  kind: 'leases';
  mode: LeaseMode;
  clients: number;
  subjects: number;
  skew: Skew;
  hold: { minMs: number; maxMs: number };
  /** Stop after this long, or after `cycles` ended holds, whichever comes first. */
  durationMs: number | undefined;
  cycles: number | undefined;
  leaseSeconds: number;
  renewMs: number;
  /** Fractions of holds: the client dies mid-hold / stops renewing and ends past its lease. */
  crash: number;
  stall: number;
  /** Fractions of holds ended by release or reject instead of complete. */
  release: number;
  reject: number;
}

export interface FanoutSpec extends TargetSpec {
  kind: 'fanout';
  streams: number;
  subscriptions: number;
  /** Publishes per second (open loop). */
  rate: number;
  size: number;
  durationMs: number | undefined;
  events: number | undefined;
  /** Close and reopen every stream with Last-Event-ID this far into the publishing (undefined: no storm). */
  stormAtMs: number | undefined;
  /** How long to wait after the last publish for the streams to catch up. */
  drainMs: number;
  /** The server's process id, when local: its memory per stream is read from /proc. */
  pid: number | undefined;
}

export interface PublishSpec extends TargetSpec {
  kind: 'publish';
  connections: number;
  size: number;
  durationMs: number;
}

export type BenchSpec = LeaseSpec | FanoutSpec | PublishSpec;

const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "250ms", "10s", "2m", or a bare number of seconds. */
export function durationFlag(flag: string, value: unknown, options: { min?: number; max?: number; zero?: boolean } = {}): number {
  const text = String(value).trim();
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
  const ms = match ? Number(match[1]) * unitMs[match[2] ?? 's']! : Number.NaN;
  const min = options.min ?? (options.zero ? 0 : 1);
  const max = options.max ?? 86_400_000;
  if (!Number.isFinite(ms) || ms < min || ms > max || (!options.zero && ms === 0)) {
    throw new BenchUsageError(`${flag} takes a duration such as 500ms, 10s or 2m (a bare number is seconds), from ${showMs(min)} to ${showMs(max)}; got "${text}".`);
  }
  return ms;
}

export function showMs(ms: number): string {
  if (ms === 0) return '0';
  if (ms % 60_000 === 0 && ms >= 60_000) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** "10ms" or "20ms-200ms": a fixed hold, or a range drawn from evenly. */
export function holdFlag(value: unknown): { minMs: number; maxMs: number } {
  const text = String(value).trim();
  const parts = text.split('-');
  const refuse = () => new BenchUsageError(`--hold takes a duration (50ms) or a range (20ms-200ms), each from 0 to 1h; got "${text}".`);
  if (parts.length > 2 || parts.some((p) => p === '')) throw refuse();
  try {
    const [minMs, maxMs = minMs] = parts.map((p) => durationFlag('--hold', p, { zero: true, max: 3_600_000 }));
    if (maxMs! < minMs!) throw new BenchUsageError(`--hold: the range must go from the shorter to the longer hold; got "${text}".`);
    return { minMs: minMs!, maxMs: maxMs! };
  } catch (error) {
    if (error instanceof BenchUsageError && error.message.startsWith('--hold:')) throw error;
    throw refuse();
  }
}

export function skewFlag(value: unknown): Skew {
  const text = String(value).trim();
  if (text === 'uniform') return { kind: 'uniform' };
  const zipf = /^zipf:(\d+(?:\.\d+)?)$/.exec(text);
  if (zipf && Number(zipf[1]) > 0 && Number(zipf[1]) <= 10) return { kind: 'zipf', s: Number(zipf[1]) };
  const hot = /^hot:(0?\.\d+|1(?:\.0+)?|0)$/.exec(text);
  if (hot && Number(hot[1]) > 0) return { kind: 'hot', fraction: Number(hot[1]) };
  throw new BenchUsageError(`--skew takes uniform, zipf:<s> (an exponent above 0 up to 10, e.g. zipf:1.1) or hot:<fraction> (the share of claims that go to one hot subject, above 0 up to 1, e.g. hot:0.5); got "${text}".`);
}

export function fractionFlag(flag: string, value: unknown): number {
  const text = String(value).trim();
  const n = /^(\d+(\.\d+)?|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 0 && n <= 1)) throw new BenchUsageError(`${flag} takes a fraction from 0 to 1 (e.g. 0.05); got "${text}".`);
  return n;
}

export function wholeFlag(flag: string, value: unknown, min: number, max: number): number {
  const text = String(value).trim();
  const n = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new BenchUsageError(`${flag} takes a whole number from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}; got "${text}".`);
  return n;
}

/** A positive decimal number (a rate). */
export function numberFlag(flag: string, value: unknown, min: number, max: number, what: string): number {
  const text = String(value).trim();
  const n = /^(\d+(\.\d+)?|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= min && n <= max)) throw new BenchUsageError(`${flag} takes ${what} from ${min} to ${max.toLocaleString('en-US')}; got "${text}".`);
  return n;
}

/** "256", "4KB", "1MB" → bytes. */
export function sizeFlag(flag: string, value: unknown, max: number): number {
  const text = String(value).trim();
  const match = /^(\d+)\s*(B|KB|kB|K|k|MB|M)?$/.exec(text);
  const factor = { B: 1, KB: 1024, kB: 1024, K: 1024, k: 1024, MB: 1 << 20, M: 1 << 20 }[match?.[2] ?? 'B'] ?? 1;
  const n = match ? Number(match[1]) * factor : Number.NaN;
  if (!(n >= 0 && n <= max)) throw new BenchUsageError(`${flag} takes a size in bytes (256, 4KB, 1MB) from 0 to ${max.toLocaleString('en-US')} bytes; got "${text}".`);
  return n;
}

export function baseFlag(values: string[]): string[] {
  if (values.length === 0) throw new BenchUsageError('--base is required: the server to measure, e.g. --base http://127.0.0.1:8130 (repeat it, or separate with commas, for several nodes).');
  for (const base of values) {
    let url: URL | undefined;
    try {
      url = new URL(base);
    } catch {
      // refused below
    }
    if (!url || !/^https?:$/.test(url.protocol)) throw new BenchUsageError(`--base takes http(s) URLs such as http://127.0.0.1:8130; got "${base}".`);
  }
  return values;
}

/** Worker threads for the clients: one per core, at least 2, at most 8, never more than there are clients. */
export function defaultThreads(clients: number): number {
  return Math.max(1, Math.min(clients, Math.min(8, Math.max(2, availableParallelism()))));
}
