// Waiting on readiness, not on a clock: polls `check` every 100 ms until it
// returns a value. The limit (stretched to the machine) only turns a hang into
// a message naming what was awaited.
import { scaled } from './time-scale.ts';

export async function until<T>(what: string, check: () => Promise<T | undefined>, limitMs = scaled(30_000)): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}
