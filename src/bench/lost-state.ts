// A server restarted without its state (`vigil serve` in memory, as `npm
// start` runs it) answers a run's requests NOT_FOUND from then on: the run's
// monitor and subscriptions are gone. Its clients would count a refusal per
// request for the rest of --duration, as fast as they are answered, and the
// summary would read as a server that refuses; the run ends there instead and
// says so (the command exits 3, as for a server that stopped answering).
import { num } from './format.ts';

/** Requests answered NOT_FOUND so far: outcome keys are a code, or an operation and its code. */
export function notFoundCount(outcomes: Readonly<Record<string, number>>): number {
  let n = 0;
  for (const [key, count] of Object.entries(outcomes)) if (key === 'NOT_FOUND' || key.endsWith(' NOT_FOUND')) n += count;
  return n;
}

/** Watches a run's outcomes; says when the first NOT_FOUND was seen (ms, the run's clock). */
export class LostStateWatch {
  private seenAt: number | undefined;

  /** The time of the first NOT_FOUND once there is one. */
  lostAt(outcomes: Readonly<Record<string, number>>, nowMs: number): number | undefined {
    if (this.seenAt === undefined && notFoundCount(outcomes) > 0) this.seenAt = nowMs;
    return this.seenAt;
  }
}

/** The summary's line (and the command's message): times from the run's start, ms. */
export function lostStateText(atMs: number, requests: number): string {
  return `the server lost the run's monitor or subscriptions at ${(atMs / 1000).toFixed(1)} s (restarted without its state?): ${num(requests)} ${requests === 1 ? 'request was' : 'requests were'} answered NOT_FOUND, and the run ended there`;
}
