// claimRefusal lets the service refuse a contended claim without an actor
// transition: it must say exactly what the lease machine would, and nothing
// when the machine would change or confirm the lease.
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { claimRefusal, leaseMachine, leaseStateOf } from '../../src/machines/lease-machine.ts';
import type { LeaseRecord, LeaseState } from '../../src/store/records.ts';

const now = 1_000_000;

function lease(holder: string | null, expiresMs: number | null): LeaseRecord {
  return {
    monitor: 'm',
    mkey: 1,
    subject: 's',
    holder,
    lease_duration_seconds: 30,
    acquire_time: null,
    renew_time: null,
    lease_transitions: 0,
    attempts: 0,
    rejects: 0,
    expiresMs,
    completedBy: null,
  };
}

const cases: Array<[string, LeaseState, LeaseRecord]> = [
  ['held by another, not lapsed', 'held', lease('sub:a', now + 5000)],
  ['held by the caller', 'held', lease('sub:b', now + 5000)],
  ['held by another, lapsed', 'held', lease('sub:a', now - 1)],
  ['held by another, lapsing this instant', 'held', lease('sub:a', now)],
  ['free', 'free', lease(null, null)],
  ['completed', 'completed', lease(null, null)],
  ['dead-lettered', 'dead_lettered', lease(null, null)],
];

describe('claimRefusal', () => {
  it.each(cases)('%s: agrees with the lease machine', (_name, state, record) => {
    // Restored a moment before the claim, so that nothing has lapsed at restore time.
    const actor = createActor(leaseMachine.provide({ actions: { announceExpiry: () => {} } }), {
      input: { state, lease: record, now: Math.min(now - 10, (record.expiresMs ?? now) - 10), rejectLimit: 5 },
    }).start();
    const before = actor.getSnapshot();
    const predicted = claimRefusal(leaseStateOf(before.value), before.context.lease, 'sub:b', now);
    actor.send({ type: 'CLAIM', holder: 'sub:b', durationSeconds: 30, fence: 7, now });
    const after = actor.getSnapshot();
    const outcome = after.context.outcome!;
    if (predicted) {
      expect(outcome).toEqual(predicted);
      expect(after.value).toBe(before.value);
      expect(after.context.lease).toEqual(before.context.lease);
    } else {
      expect(outcome.ok).toBe(true);
    }
    actor.stop();
  });

  it('refuses only the two cases that change nothing', () => {
    const refused = cases.filter(([, state, record]) => claimRefusal(state, record, 'sub:b', now)).map(([name]) => name);
    expect(refused).toEqual(['held by another, not lapsed', 'dead-lettered']);
  });
});
