// The rules `vigil bench leases` judges a run by, on hand-made records (no
// server, no clock): when two holds provably overlap, when an accepted end
// came after a re-grant, how a crashed hold's reclaim is timed, and that the
// judge still pairs holds that arrive out of order from several threads while
// forgetting the ones no later hold can be paired with.
import { describe, expect, it } from 'vitest';
import { endAcceptedAfterRegrant, LeaseJudge, provablyOverlap } from '../../src/bench/lease-judge.ts';
import type { Hold, OpRecord } from '../../src/bench/lease-records.ts';

const op = (o: OpRecord['op'], send: number, answer: number, status = 200, code?: string): OpRecord => ({ op: o, send, answer, status, ...(code ? { code } : {}) });

/** A hold granted by a claim sent at `claim` and answered at `granted`, ended by `end` when given. */
function hold(holder: string, claim: number, granted: number, end?: OpRecord, extra: Partial<Hold> = {}): Hold {
  return {
    client: Number(holder.replace(/\D/g, '')) || 0,
    holder,
    subject: 's1',
    durationMs: 1000,
    grant: op('claim', claim, granted, 201),
    fence: null,
    renews: [],
    ...(end ? { end } : {}),
    validSend: claim,
    validAnswer: granted,
    ...extra,
  };
}

describe('provable overlap', () => {
  it('is a second grant answered before the first holder sent its end, within its lease', () => {
    const a = hold('a', 0, 5, op('complete', 100, 105));
    const b = hold('b', 20, 50, op('complete', 200, 205));
    expect(provablyOverlap(a, b)).toBe(true);
    expect(provablyOverlap(b, a)).toBe(true);
  });

  it('is not a grant answered after the first holder sent its complete', () => {
    const a = hold('a', 0, 5, op('complete', 100, 105));
    const b = hold('b', 90, 101, op('complete', 200, 205));
    expect(provablyOverlap(a, b)).toBe(false);
  });

  it('is not a grant after the first lease may have expired (claim sent + duration)', () => {
    // A crashed: its lease is proven only until 0 + 1000 ms.
    const a = hold('a', 0, 5, undefined, { crashedAt: 50 });
    expect(provablyOverlap(a, hold('b', 990, 1001))).toBe(false);
    expect(provablyOverlap(a, hold('b', 900, 999))).toBe(true);
  });

  it('counts an accepted renewal: it extends what is proven from the renewal’s send', () => {
    const a = hold('a', 0, 5, op('complete', 3000, 3005), { validSend: 1500, validAnswer: 1510, renews: [op('renew', 1500, 1510)] });
    expect(provablyOverlap(a, hold('b', 2000, 2400))).toBe(true);
    expect(provablyOverlap(a, hold('b', 2400, 2501))).toBe(false);
  });

  it('never pairs a holder with itself', () => {
    expect(provablyOverlap(hold('a', 0, 5), hold('a', 10, 20))).toBe(false);
  });
});

describe('late end accepted', () => {
  it('is an end accepted after another holder was granted (and provably held) after this grant', () => {
    const stalled = hold('a', 0, 5, op('complete', 1600, 1605), { stalled: true });
    const regrant = hold('b', 1100, 1110, op('complete', 1200, 1205));
    expect(provablyOverlap(stalled, regrant)).toBe(false);
    expect(endAcceptedAfterRegrant(stalled, regrant)).toBe(true);
    expect(endAcceptedAfterRegrant(regrant, stalled)).toBe(false);
  });

  it('is not an end the server refused', () => {
    const stalled = hold('a', 0, 5, op('complete', 1600, 1605, 409, 'LEASE_LOST'));
    expect(endAcceptedAfterRegrant(stalled, hold('b', 1100, 1110))).toBe(false);
  });

  it('is not an end after a grant that was answered too late to prove anything', () => {
    // B's claim took longer than its lease to answer: B never provably held the subject.
    const a = hold('a', 0, 5, op('complete', 2500, 2505));
    expect(endAcceptedAfterRegrant(a, hold('b', 100, 1200))).toBe(false);
  });
});

describe('the judge', () => {
  it('pairs holds that arrive out of order from two threads, once each', () => {
    const judge = new LeaseJudge(2);
    const a = hold('a', 0, 5, op('complete', 100, 105));
    const b = hold('b', 20, 50, op('complete', 200, 205));
    judge.add(b);
    judge.add(a);
    expect(judge.duplicateCount).toBe(1);
    expect(judge.violations[0]!.holds).toEqual([a, b]);
    expect(judge.violations[0]!.why).toContain('provably held');
  });

  it('counts a late end once, however many grants came before it', () => {
    const judge = new LeaseJudge(1);
    const stalled = hold('a', 0, 5, op('complete', 3000, 3005), { stalled: true });
    judge.add(hold('b', 1100, 1110, op('complete', 1200, 1205)));
    judge.add(hold('c', 1300, 1310, op('complete', 1400, 1405)));
    judge.add(stalled);
    expect(judge.lateAcceptedCount).toBe(1);
    expect(judge.duplicateCount).toBe(0);
  });

  it('times a reclaim from the crashed lease’s latest expiry to the next grant', () => {
    const judge = new LeaseJudge(1);
    judge.add(hold('b', 1040, 1060, op('complete', 1100, 1105)));
    judge.add(hold('a', 0, 5, undefined, { crashedAt: 8 }));
    judge.add(hold('c', 2000, 2010));
    judge.finish();
    // Latest expiry: granted (answered) at 5 + 1000 ms; the next grant of another holder answered at 1060.
    expect(judge.reclaimTimes).toEqual([55]);
    expect(judge.unreclaimed).toBe(0);
  });

  it('forgets holds below every thread’s low-water mark, and still finds later overlaps', () => {
    const judge = new LeaseJudge(2);
    for (let i = 0; i < 100; i++) judge.add({ ...hold(`h${i}`, i * 10, i * 10 + 1, op('complete', i * 10 + 5, i * 10 + 6)), subject: `s${i % 5}` });
    expect(judge.kept).toBe(100);
    judge.low(0, 2000);
    expect(judge.kept).toBe(100);
    judge.low(1, 2000);
    expect(judge.kept).toBe(0);
    const a = hold('x', 2000, 2001, op('complete', 2100, 2101));
    judge.add(a);
    judge.add(hold('y', 2010, 2020, op('complete', 2200, 2201)));
    expect(judge.duplicateCount).toBe(1);
  });
});
