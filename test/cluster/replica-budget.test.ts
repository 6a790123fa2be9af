// The replica budget's choice of monitors to drop (src/cluster/replica-budget.ts),
// on a fake replica and a fake clock: the least recently used first, none used
// in the cold time, none the node keeps, and no more once the replica fits.
import { describe, expect, it } from 'vitest';
import { ReplicaBudget } from '../../src/cluster/replica-budget.ts';

function fakeReplica(sizes: Record<number, number>, kept: number[] = []) {
  const held = new Map(Object.entries(sizes).map(([k, v]) => [Number(k), v]));
  const dropped: number[] = [];
  const logged: string[] = [];
  let now = 0;
  const budget = new ReplicaBudget(
    {
      usedBytes: () => [...held.values()].reduce((a, b) => a + b, 0),
      drop: async (mkey) => {
        if (!held.has(mkey)) return 'absent';
        if (kept.includes(mkey)) return 'kept';
        held.delete(mkey);
        dropped.push(mkey);
        return 'dropped';
      },
      log: (line) => logged.push(line),
    },
    { budgetBytes: 100, coldMs: 5000, checkMs: 3_600_000, now: () => now },
  );
  return { budget, dropped, logged, held, advance: (ms: number) => (now += ms) };
}

describe('the replica budget', () => {
  it('drops the least recently used cold monitors until the replica fits', async () => {
    const r = fakeReplica({ 1: 60, 2: 60, 3: 60 });
    r.budget.touch(2);
    r.budget.touch(1);
    r.budget.touch(3);
    r.advance(6000);
    await r.budget.check();
    expect(r.dropped).toEqual([2, 1]);
    expect(r.logged).toHaveLength(1);
    await r.budget.close();
  });

  it('keeps monitors used within the cold time, and those the node keeps', async () => {
    const r = fakeReplica({ 1: 60, 2: 60, 3: 60 }, [1]);
    r.budget.touch(1);
    r.budget.touch(2);
    r.advance(6000);
    r.budget.touch(3);
    await r.budget.check();
    expect(r.dropped).toEqual([2]);
    expect(r.budget.isCold(3)).toBe(false);
    r.advance(6000);
    await r.budget.check();
    expect(r.dropped).toEqual([2, 3]);
    await r.budget.close();
  });

  it('a budget that fits N monitors keeps at most N, the most recently used', async () => {
    const sizes = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [i + 1, 10]));
    const r = fakeReplica(sizes);
    for (const mkey of [4, 9, 1, 7, 2, 10, 3, 8, 5, 6]) r.budget.touch(mkey);
    r.advance(6000);
    // The fake's budget is 100 bytes: 10 monitors of 10 fit; two more make it 12, and 2 must go.
    r.budget.touch(11);
    r.budget.touch(12);
    const held = r.held;
    held.set(11, 10);
    held.set(12, 10);
    await r.budget.check();
    expect(r.dropped).toEqual([4, 9]);
    expect(held.size).toBe(10);
    await r.budget.close();
  });

  it('does nothing within the budget', async () => {
    const r = fakeReplica({ 1: 40, 2: 40 });
    r.budget.touch(1);
    r.budget.touch(2);
    r.advance(60_000);
    await r.budget.check();
    expect(r.dropped).toEqual([]);
    expect(r.logged).toEqual([]);
    await r.budget.close();
  });
});
