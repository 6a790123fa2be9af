// The lease machine's fencing rule (protocol.md §21), in-process on the
// machine's own time: a call that names a grant other than the current one
// is refused LEASE_LOST with the current holder and token and changes
// nothing; a call without a token is judged by its holder alone; the token
// survives a restore from the stored row.
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { type LeaseEvent, leaseMachine, leaseStateOf } from '../../src/machines/lease-machine.ts';
import type { LeaseRecord, LeaseState } from '../../src/store/records.ts';

const start = 1_000_000;
const blank: LeaseRecord = {
  monitor: 'm',
  mkey: 1,
  subject: 's',
  holder: null,
  lease_duration_seconds: 30,
  acquire_time: null,
  renew_time: null,
  lease_transitions: 0,
  attempts: 0,
  rejects: 0,
  expiresMs: null,
  completedBy: null,
};

function lease(state: LeaseState = 'free', record: LeaseRecord = blank, now = start) {
  const expired: LeaseRecord[] = [];
  const actor = createActor(leaseMachine.provide({ actions: { announceExpiry: (_, p: { lease: LeaseRecord }) => void expired.push(p.lease) } }), {
    input: { state, lease: record, now, rejectLimit: 5 },
  }).start();
  const send = (event: LeaseEvent) => {
    actor.send(event);
    const snapshot = actor.getSnapshot();
    return { outcome: snapshot.context.outcome!, state: leaseStateOf(snapshot.value), lease: snapshot.context.lease };
  };
  return { actor, send, expired };
}

describe('lease fencing tokens', () => {
  it('each claim takes the token it is given; a re-claim by the holder keeps it', () => {
    const { send } = lease();
    expect(send({ type: 'CLAIM', holder: 'sub:a', durationSeconds: 30, fence: 4, now: start }).lease.fence).toBe(4);
    const again = send({ type: 'CLAIM', holder: 'sub:a', durationSeconds: 30, fence: 9, now: start + 1 });
    expect(again.outcome).toEqual({ ok: true, effect: 'reclaimed' });
    expect(again.lease.fence).toBe(4);
  });

  it.each(['RENEW', 'COMPLETE', 'RELEASE', 'REJECT'] as const)('%s naming an older grant of the same holder changes nothing', (type) => {
    const { send } = lease();
    send({ type: 'CLAIM', holder: 'sub:a', durationSeconds: 30, fence: 4, now: start });
    send({ type: 'RELEASE', holder: 'sub:a', fence: 4, now: start + 1 });
    const current = send({ type: 'CLAIM', holder: 'sub:a', durationSeconds: 30, fence: 7, now: start + 2 });
    const stale = send({ type, holder: 'sub:a', fence: 4, seq: 8, now: start + 3 } as LeaseEvent);
    expect(stale.outcome).toEqual({ ok: false, code: 'LEASE_LOST', holder: 'sub:a', expiresMs: current.lease.expiresMs, fence: 7 });
    expect(stale.state).toBe('held');
    expect(stale.lease).toEqual(current.lease);
  });

  it('a call without a token is judged by its holder; one with the current token succeeds', () => {
    const { send } = lease();
    send({ type: 'CLAIM', holder: 'sub:a', durationSeconds: 30, fence: 4, now: start });
    expect(send({ type: 'RENEW', holder: 'sub:a', now: start + 1 }).outcome).toEqual({ ok: true, effect: 'renewed' });
    expect(send({ type: 'RENEW', holder: 'sub:b', fence: 4, now: start + 2 }).outcome).toMatchObject({ ok: false, code: 'LEASE_LOST', holder: 'sub:a' });
    const done = send({ type: 'COMPLETE', holder: 'sub:a', fence: 4, seq: 11, now: start + 3 });
    expect(done).toMatchObject({ state: 'completed', outcome: { ok: true, effect: 'completed' }, lease: { completedSeq: 11, fence: 4 } });
    // The same complete again answers the same; one naming another grant does not.
    expect(send({ type: 'COMPLETE', holder: 'sub:a', fence: 4, seq: 12, now: start + 4 }).outcome).toEqual({ ok: true, effect: 'recompleted' });
    expect(send({ type: 'COMPLETE', holder: 'sub:a', fence: 3, seq: 12, now: start + 4 }).outcome).toMatchObject({ ok: false, code: 'LEASE_LOST' });
  });

  it('after expiry the stale holder is told nobody holds it; the next grant has a new token', () => {
    const { send } = lease();
    send({ type: 'CLAIM', holder: 'sub:a', durationSeconds: 30, fence: 4, now: start });
    // A grant lasts its duration from the millisecond after the claim's (the clock cuts time down).
    const late = send({ type: 'COMPLETE', holder: 'sub:a', fence: 4, seq: 9, now: start + 30_001 });
    expect(late.outcome).toEqual({ ok: false, code: 'LEASE_LOST', holder: null, expiresMs: null, fence: null });
    const next = send({ type: 'CLAIM', holder: 'sub:b', durationSeconds: 30, fence: 10, now: start + 30_002 });
    expect(next.lease).toMatchObject({ holder: 'sub:b', fence: 10, completedSeq: undefined });
  });

  it('the token survives a restore from the stored row', () => {
    const first = lease();
    const held = first.send({ type: 'CLAIM', holder: 'sub:a', durationSeconds: 30, fence: 4, now: start });
    first.actor.stop();
    const restored = lease('held', JSON.parse(JSON.stringify(held.lease)), start + 10);
    expect(restored.send({ type: 'RELEASE', holder: 'sub:a', fence: 3, now: start + 11 }).outcome).toMatchObject({ code: 'LEASE_LOST', fence: 4 });
    expect(restored.send({ type: 'RELEASE', holder: 'sub:a', fence: 4, now: start + 12 }).outcome).toEqual({ ok: true, effect: 'released' });
  });
});
