// Run ids are the names of the runs' record folders: two runs must never get the same one, even when a
// wide composite prepares hundreds of children in one second (ids carry the second and two random bytes).
import { describe, expect, it } from 'vitest';
import { newRunId } from '../../src/recipes/records/run-record.ts';

describe('newRunId', () => {
  it('never gives the same id twice in one second, and keeps the id format', () => {
    const second = new Date('2026-12-06T14:30:00.000Z');
    const ids = Array.from({ length: 10_000 }, () => newRunId(second));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^20261206-143000-[0-9a-f]{4}$/);
    expect(newRunId(new Date('2026-12-06T14:30:01.000Z'))).toMatch(/^20261206-143001-/);
  });
});
