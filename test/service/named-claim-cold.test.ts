// A named claim of a subject no lease actor holds is decided from the lease's
// row (src/service/lease-operations.ts, claimCold): granted when the row is
// free, completed or missing, refused when another holds it or it is
// dead-lettered, and left to the actor when the caller holds it already or
// its grant lapsed. In-process on a manual clock, through the HTTP door: the
// replies, the `lease` observations and the one-holder rule must be what the
// actor gives.
import { afterEach, describe, expect, it } from 'vitest';
import { leaseKey } from '../../src/actors/root-system.ts';
import { type Door, openDoor } from '../support/door.ts';

let door: Door | undefined;
afterEach(() => {
  door?.close();
  door = undefined;
});

async function workplace(residentActors?: number) {
  door = openDoor(residentActors === undefined ? {} : { residentActors });
  const { id, ownerToken } = await door.createMonitor({ id: 'work', capabilities: ['observe', 'act'] });
  await door.publish(id, ownerToken, { type: 'test.job', subject: 'job-1' });
  const a = await door.subscribe({ monitor: id, subscriber: 'agent:a', capabilities: ['observe', 'act'] }, ownerToken);
  const b = await door.subscribe({ monitor: id, subscriber: 'agent:b', capabilities: ['observe', 'act'] }, ownerToken);
  const act = (who: { id: string; token: string }, action: string, body: Record<string, unknown> = {}) =>
    door!.request('POST', `/subscriptions/${who.id}/leases/${action}`, { token: who.token, body: { subject: 'job-1', ...body } });
  const resident = () => door!.service.system.leases.isResident(leaseKey(door!.service.feed('work')!.key, 'job-1'));
  const leaseObservations = async () => (await door!.feed('work', ownerToken)).filter((o) => o.type.endsWith('.lease'));
  return { a, b, act, resident, leaseObservations };
}

describe('named claims decided from the row', () => {
  it('grants a never-leased subject, refuses another holder, completes, and grants the completed subject again', async () => {
    const { a, b, act, resident, leaseObservations } = await workplace();
    const first = await act(a, 'claim', { lease_duration_seconds: 60 });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ lease: { subject: 'job-1', holder: `sub:${a.id}`, state: 'held' }, idempotent: false });
    expect(first.body.fence).toBe(first.body.lease.fence);
    expect(resident()).toBe(false);

    const refused = await act(b, 'claim');
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'LEASE_HELD', holder: `sub:${a.id}`, expires: first.body.expires });

    const done = await act(a, 'complete', { fence: first.body.fence, outcome: { ok: true } });
    expect(done.status).toBe(200);
    expect(done.body.lease).toMatchObject({ state: 'completed', holder: null });

    const again = await act(b, 'claim');
    expect(again.status).toBe(201);
    expect(again.body.lease).toMatchObject({ holder: `sub:${b.id}`, state: 'held', attempts: 2 });
    expect(again.body.fence).toBeGreaterThan(first.body.fence);

    const records = await leaseObservations();
    expect(records.map((o) => [o.data.payload.action, o.data.payload.holder, o.data.payload.fence])).toEqual([
      ['claim', `sub:${a.id}`, first.body.fence],
      ['complete', `sub:${a.id}`, first.body.fence],
      ['claim', `sub:${b.id}`, again.body.fence],
    ]);
    // A grant's fence is the seq its own `lease` observation took.
    expect(records.filter((o) => o.data.payload.action === 'claim').map((o) => Number(o.id))).toEqual([first.body.fence, again.body.fence]);
  });

  it("leaves a claim of the caller's own grant to the actor, and a grant that lapsed is expired and recorded before another takes it", async () => {
    const { a, b, act, leaseObservations } = await workplace();
    const first = await act(a, 'claim', { lease_duration_seconds: 30 });
    const repeat = await act(a, 'claim', { lease_duration_seconds: 30 });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toMatchObject({ idempotent: true, fence: first.body.fence });

    door!.clock.advance(31_000);
    await door!.settle();
    const taken = await act(b, 'claim');
    expect(taken.status).toBe(201);
    expect(taken.body.lease.holder).toBe(`sub:${b.id}`);
    const actions = (await leaseObservations()).map((o) => [o.data.payload.action, o.data.payload.holder]);
    expect(actions).toEqual([
      ['claim', `sub:${a.id}`],
      ['expired', `sub:${a.id}`],
      ['claim', `sub:${b.id}`],
    ]);
    const lost = await act(a, 'complete', { fence: first.body.fence });
    expect(lost.status).toBe(409);
    expect(lost.body.code).toBe('LEASE_LOST');
  });

  it('refuses a dead-lettered subject from its row', async () => {
    // No actor stays resident after a commit: the last claim is decided from the row.
    const { a, b, act, resident } = await workplace(0);
    for (let i = 0; i < 5; i++) {
      const claimed = await act(a, 'claim');
      expect(claimed.status).toBe(201);
      expect((await act(a, 'reject', { fence: claimed.body.fence })).status).toBe(200);
    }
    expect(resident()).toBe(false);
    const refused = await act(b, 'claim');
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('DEAD_LETTERED');
  });
});
