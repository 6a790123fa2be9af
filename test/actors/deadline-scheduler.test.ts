// The one timer behind the deadlines of actors that are not resident, on a manual clock.
import { describe, expect, it } from 'vitest';
import { DeadlineScheduler } from '../../src/actors/deadline-scheduler.ts';
import { ManualClock } from '../support/manual-clock.ts';

describe('deadline scheduler', () => {
  it('holds a bounded heap when the same deadlines move again and again, and wakes each key once at its last deadline', async () => {
    const woken: string[] = [];
    const clock = new ManualClock();
    const scheduler = new DeadlineScheduler(clock, (key) => woken.push(key));
    const start = clock.now();
    // An open stream's subscription moves its mute deadline on every activity: 100 keys × 1,000 moves.
    for (let round = 0; round < 1000; round++) {
      for (let k = 0; k < 100; k++) scheduler.at(`s:${k}`, start + 60_000 + round);
    }
    expect(scheduler.size).toBe(100);
    expect(scheduler.held).toBeLessThanOrEqual(2 * 100 + 1024 + 1);
    // Moved into the near future, every key wakes exactly once.
    for (let k = 0; k < 100; k++) scheduler.at(`s:${k}`, clock.now() + 20);
    await clock.advance(19);
    expect(woken).toEqual([]);
    await clock.advance(1);
    expect(woken.sort()).toEqual(Array.from({ length: 100 }, (_, k) => `s:${k}`).sort());
    expect(scheduler.size).toBe(0);
    scheduler.stop();
  });
});
