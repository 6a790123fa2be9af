// The cron triggers of managed-edge workers: one croner job per pattern,
// calling the worker's scheduled handler. Patterns have 5 fields (as on the
// edge platform) or 6 (with seconds first). Each run is named by the time it
// is due, the same on every node of a cluster, which claims it before running.
import { Cron } from 'croner';
import { invalid } from '../../protocol/errors.ts';

export const maxCronsPerWorker = 5;

export function checkCrons(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > maxCronsPerWorker || value.some((c) => typeof c !== 'string')) {
    throw invalid(`"crons" must be a list of at most ${maxCronsPerWorker} cron patterns.`, { field: 'crons' });
  }
  for (const pattern of value as string[]) {
    try {
      new Cron(pattern, { paused: true, mode: '5-or-6-parts' }).stop();
    } catch (error) {
      throw invalid(`"crons" holds an invalid pattern "${pattern}": ${(error as Error).message}.`, { field: 'crons' });
    }
  }
  return value as string[];
}

/** The latest time `job`'s pattern names at or before its current run (a late timer still names a due time). */
function dueOf(job: Cron): number {
  const fired = job.currentRun()?.getTime() ?? Date.now();
  return job.previousRuns(1, new Date(fired + 1))[0]?.getTime() ?? Math.floor(fired / 1000) * 1000;
}

export class CronJobs {
  private readonly jobs = new Map<string, { patterns: string; jobs: Cron[] }>();

  constructor(private readonly fire: (name: string, cron: string, dueMs: number) => void) {}

  set(name: string, patterns: readonly string[]): void {
    this.stop(name);
    if (patterns.length === 0) return;
    this.jobs.set(name, {
      patterns: JSON.stringify(patterns),
      jobs: patterns.map((pattern) => new Cron(pattern, { mode: '5-or-6-parts', protect: true, unref: true }, (job: Cron) => this.fire(name, pattern, dueOf(job)))),
    });
  }

  /** Makes the jobs those of `all` (name to JSON list of patterns), leaving unchanged ones running. */
  sync(all: ReadonlyMap<string, string>): void {
    for (const name of [...this.jobs.keys()]) if (!all.has(name)) this.stop(name);
    for (const [name, patterns] of all) {
      if (this.jobs.get(name)?.patterns === patterns) continue;
      this.set(name, JSON.parse(patterns) as string[]);
    }
  }

  stop(name: string): void {
    for (const job of this.jobs.get(name)?.jobs ?? []) job.stop();
    this.jobs.delete(name);
  }

  stopAll(): void {
    for (const name of [...this.jobs.keys()]) this.stop(name);
  }
}
