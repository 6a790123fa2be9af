// A wait that a signal may cut short leaves nothing on the signal: the daemon's sentinels and
// `vigil watch` wait between retries on a signal that lives as long as they do (before, each wait
// left its listener: Node warned of a leak after ten retries, and they grew for as long as the
// server stayed away).
import { getEventListeners, setMaxListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../src/timing/sleep.ts';

describe('sleep', () => {
  it('leaves no abort listener on the signal once the wait has passed', async () => {
    const stop = new AbortController();
    // Fifty waits at once hold fifty listeners for a moment, on purpose: not the leak Node would warn of.
    setMaxListeners(100, stop.signal);
    const passed = await Promise.all(Array.from({ length: 50 }, () => sleep(1, stop.signal)));
    expect(passed.every((p) => p === true)).toBe(true);
    for (let i = 0; i < 20; i++) expect(await sleep(1, stop.signal)).toBe(true);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('ends at once, false, when the signal aborts, and does not wait at all on an aborted signal', async () => {
    const stop = new AbortController();
    const waiting = sleep(60_000, stop.signal);
    stop.abort();
    expect(await waiting).toBe(false);
    expect(await sleep(60_000, stop.signal)).toBe(false);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });
});
