// What every scenario gets: the run's sizes, the report it adds rows to, and
// the closed-loop load helper that measures a server from separate processes.
import { runChildren } from './children.ts';
import { type Histogram, merge, percentileOf } from './histogram.ts';
import type { Report } from './report.ts';
import type { BenchServer } from './server.ts';
import type { Sub } from './setup.ts';

export interface Sizes {
  /** Each closed-loop publish or discover measurement. */
  durationMs: number;
  /** Observations stored before the second publish measurement. */
  stored: number;
  streams: number;
  events: number;
  leaseMs: number;
  wakeSamples: number;
  /** Actors of each kind in the memory scenario. */
  actors: number;
  /** Each point of the scaling curves. */
  scalingMs: number;
}

export interface BenchContext {
  /** The commit checked out when the run started (short hash). */
  readonly commit: string;
  readonly quick: boolean;
  readonly size: Sizes;
  readonly report: Report;
  /** Node flags for every server (e.g. --cpu-prof). */
  readonly nodeFlags: readonly string[];
}

export interface LoadResult {
  /** Successful requests per second. */
  rate: number;
  /** Server CPU (user + system) per request, µs: independent of how busy the shared machine is. */
  cpuUs: number;
  p50: number;
  p99: number;
  ok: number;
  failed: number;
  wins: number;
  refused: number;
  elapsed: number;
}

interface ChildResult {
  ok: number;
  refused: number;
  failed: number;
  wins: number;
  elapsedMs: number;
  latency: Histogram;
}

export const loadProcesses = 2;

export interface LoadSpec {
  mode: 'discover' | 'publish' | 'lease';
  concurrency: number;
  durationMs: number;
  /** publish: the monitors to spread the workers over, with their owner tokens. */
  targets?: Array<{ monitor: string; token: string }>;
  /** lease: one acting subscription per worker. */
  subscriptions?: Sub[];
  subjects?: number;
}

/** Runs the closed-loop load child over up to `loadProcesses` processes. */
export async function load(server: Pick<BenchServer, 'base' | 'cpuSeconds'>, spec: LoadSpec): Promise<LoadResult> {
  const processes = Math.min(loadProcesses, spec.concurrency);
  const per = Math.ceil(spec.concurrency / processes);
  const cpu0 = server.cpuSeconds();
  const results = await runChildren<ChildResult>(
    'load',
    (i) => ({
      base: server.base,
      mode: spec.mode,
      concurrency: Math.min(per, spec.concurrency - i * per),
      durationMs: spec.durationMs,
      offset: i * per,
      targets: spec.targets,
      subjects: spec.subjects,
      ...(spec.subscriptions ? { subscriptions: spec.subscriptions.slice(i * per, (i + 1) * per) } : {}),
    }),
    processes,
  );
  const elapsed = Math.max(...results.map((r) => r.elapsedMs)) / 1000;
  const sum = (k: 'ok' | 'failed' | 'wins' | 'refused') => results.reduce((a, r) => a + r[k], 0);
  const cpuUs = ((server.cpuSeconds() - cpu0) * 1e6) / Math.max(1, sum('ok') + sum('wins'));
  const latency = merge(results.map((r) => r.latency));
  return {
    rate: sum('ok') / elapsed,
    cpuUs,
    p50: percentileOf(latency, 50),
    p99: percentileOf(latency, 99),
    ok: sum('ok'),
    failed: sum('failed'),
    wins: sum('wins'),
    refused: sum('refused'),
    elapsed,
  };
}
