// The cron triggers of managed-edge workers: one croner job per pattern,
// calling the worker's scheduled handler. Patterns have 5 fields (as on the
// edge platform) or 6 (with seconds first).
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

export class CronJobs {
  private readonly jobs = new Map<string, Cron[]>();

  constructor(private readonly fire: (name: string, cron: string) => void) {}

  set(name: string, patterns: readonly string[]): void {
    this.stop(name);
    if (patterns.length === 0) return;
    this.jobs.set(
      name,
      patterns.map((pattern) => new Cron(pattern, { mode: '5-or-6-parts', protect: true, unref: true }, () => this.fire(name, pattern))),
    );
  }

  stop(name: string): void {
    for (const job of this.jobs.get(name) ?? []) job.stop();
    this.jobs.delete(name);
  }

  stopAll(): void {
    for (const name of [...this.jobs.keys()]) this.stop(name);
  }
}
