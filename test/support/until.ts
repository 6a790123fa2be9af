// Waiting on readiness, not on a clock: polls `check` every 100 ms until it
// returns a value. The limit (stretched to the machine) only turns a hang into
// a message naming what was awaited; `what` may be a function, to say what the
// state was when the wait gave up.
import { scaled } from './time-scale.ts';

type What = string | (() => string);

export async function until<T>(what: What, check: () => T | undefined | Promise<T | undefined>, limitMs = scaled(30_000)): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`gave up waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** As until, for a condition. */
export async function untilTrue(what: What, holds: () => boolean | Promise<boolean>, limitMs = scaled(30_000)): Promise<void> {
  await until(what, async () => ((await holds()) ? true : undefined), limitMs);
}
