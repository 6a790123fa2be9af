// isoTime keeps the last two times it formatted (a lease change asks for the
// time now and the lease's expiry in turn): whatever the order of the calls,
// each answer is the time's own ISO text.
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/protocol/wire-values.ts';

describe('isoTime', () => {
  it('gives new Date(ms).toISOString() for any sequence of times, repeated or alternating', () => {
    const base = Date.parse('2026-12-06T11:00:00.000Z');
    const times = [base, base, base + 300_001, base, base + 300_001, base + 1, base + 300_001, base + 2, base + 2, base];
    let seed = 7;
    for (let i = 0; i < 2000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      times.push(base + (seed % 4) * 150_000 + (seed % 3));
    }
    for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });
});
