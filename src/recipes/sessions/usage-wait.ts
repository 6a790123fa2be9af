// The wait for a provider's usage limit to reset: until the reset time the
// agent printed (a little after, so the provider has reset), never past what
// is left of the step's usage_limit_wait. A message without a time is waited
// on in rounds of at most RETRY_WITHOUT_TIME_MS, the agent asked again after
// each. The clock is a parameter so that the rule runs on a manual clock.
import { describeLeft } from './durations.ts';
import type { UsageLimit } from './usage-limit.ts';

export interface WaitClock {
  now(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: WaitClock = {
  now: () => Date.now(),
  setTimeout: (cb, ms) => setTimeout(cb, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export const RETRY_WITHOUT_TIME_MS = 30 * 60_000;
/** After the printed reset: the CLI prints minutes, the provider resets on its own second. */
export const RESET_MARGIN_MS = 1000;
/** The least wait when the agent is limited again right after a wait: a reset time already past must not make it spin. */
export const AGAIN_MIN_MS = 60_000;

export type WaitPlan = { until: number } | { refused: string };

/** When to continue after `limit`, or why not to wait (the reset is past what is left of the allowance). */
export function planWait(limit: UsageLimit, now: number, allowanceLeftMs: number, allowanceText: string, again = false): WaitPlan {
  if (limit.resetAt === null) {
    if (allowanceLeftMs <= 0) return { refused: `${limit.provider} usage limit reached (no reset time given) and usage_limit_wait (${allowanceText}) is used up` };
    return { until: now + Math.min(RETRY_WITHOUT_TIME_MS, allowanceLeftMs) };
  }
  const until = Math.max(now + (again ? AGAIN_MIN_MS : 0), limit.resetAt + RESET_MARGIN_MS);
  if (until - now > allowanceLeftMs)
    return { refused: `${limit.provider} usage limit resets at ${clockText(limit.resetAt, now)}, later than usage_limit_wait allows (${allowanceText}${allowanceLeftMs > 0 ? `, ${describeLeft(allowanceLeftMs)} left` : ', used up'})` };
  return { until };
}

/** "15:00", or "Dec 8 15:00" when not today. */
export function clockText(at: number, now: number): string {
  const d = new Date(at);
  const hm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  if (new Date(now).toDateString() === d.toDateString()) return hm;
  return `${d.toLocaleString('en-US', { month: 'short' })} ${d.getDate()} ${hm}`;
}

/** "waiting for claude usage limit reset at 15:00 (42m left)". */
export function describeWait(provider: string, until: number, now: number): string {
  return `waiting for ${provider} usage limit reset at ${clockText(until, now)} (${describeLeft(until - now)} left)`;
}

/** Waits until `until` on `clock`; false when the signal aborted first. */
export function waitUntil(clock: WaitClock, until: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      resolve(false);
    };
    const handle = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, Math.max(0, until - clock.now()));
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
