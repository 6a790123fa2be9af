// The mute timer of a live subscription (§9): activity moves the deadline
// without rescheduling the timer, so the timer that fires at the old deadline
// must arm itself again for the rest, and retire the subscription exactly when
// the last activity's mute period ends. A renewal with a shorter period takes
// effect at once. Driven on XState's simulated clock: the times are exact.
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { subscriptionMachine } from '../../src/machines/subscription-machine.ts';
import type { SubscriptionRecord } from '../../src/store/records.ts';

const muteMs = 1000;

function record(lastActivityMs: number): SubscriptionRecord {
  return {
    id: 'sub-1',
    monitor: 'm',
    mkey: 1,
    subscriber: 'agent:a',
    capabilities: ['observe'],
    protocol: 'pull',
    filter: {},
    reset_policy: 'earliest',
    retire_after_mute_seconds: null,
    created: new Date(0).toISOString(),
    last_pull: null,
    tokenHash: 'h',
    cursor: 1,
    maxShown: 0,
    muteMs,
    lastActivityMs,
  } as SubscriptionRecord;
}

function start() {
  const clock = new SimulatedClock();
  const muted: number[] = [];
  const logic = subscriptionMachine.provide({ actions: { announceMuted: () => void muted.push(clock.now()) } });
  const actor = createActor(logic, { clock, input: { state: 'live', subscription: record(0), now: 0 } }).start();
  const at = (ms: number) => clock.increment(ms - clock.now());
  return { actor, clock, muted, at };
}

describe('the subscription mute timer', () => {
  it('retires a subscription with no activity at the end of its mute period', () => {
    const { actor, muted, at } = start();
    at(999);
    expect(actor.getSnapshot().value).toBe('live');
    at(1000);
    expect(actor.getSnapshot().value).toBe('retired');
    expect(muted).toEqual([1000]);
  });

  it('keeps it live past the old deadline after activity, and retires it when the new one passes', () => {
    const { actor, muted, at } = start();
    at(600);
    actor.send({ type: 'ACTIVITY', now: 600 });
    at(1000);
    expect(actor.getSnapshot().value).toBe('live');
    at(1500);
    actor.send({ type: 'ACK', cursor: 1, head: 1, now: 1500 });
    at(1600);
    expect(actor.getSnapshot().value).toBe('live');
    at(2499);
    expect(actor.getSnapshot().value).toBe('live');
    at(2500);
    expect(actor.getSnapshot().value).toBe('retired');
    expect(muted).toEqual([2500]);
  });

  it('arms the timer again on a renewal that shortens the mute period', () => {
    const { actor, muted, at } = start();
    at(100);
    actor.send({ type: 'REKEY', tokenHash: 'h2', now: 100, settings: { muteMs: 200 } });
    at(299);
    expect(actor.getSnapshot().value).toBe('live');
    at(300);
    expect(actor.getSnapshot().value).toBe('retired');
    expect(muted).toEqual([300]);
  });

  it('stays retired and records one retirement however many pulls came before', () => {
    const { actor, muted, at } = start();
    for (let t = 100; t <= 900; t += 100) {
      at(t);
      actor.send({ type: 'ACTIVITY', now: t });
    }
    // The timer armed at 0 fires at 1000 and is armed again for the 900 ms left.
    at(1000);
    expect(actor.getSnapshot().value).toBe('live');
    at(1899);
    expect(actor.getSnapshot().value).toBe('live');
    at(1900);
    at(5000);
    expect(actor.getSnapshot().value).toBe('retired');
    expect(muted).toEqual([1900]);
  });
});
