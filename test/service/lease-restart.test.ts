// A server restarted on its state file after many lease cycles stands exactly
// where it stopped: every lease as it was (holder, counts, fence, outcome,
// take-next's place), the monitor's state document, fences that keep growing,
// and take-next granting the oldest free subject. The cycles are random
// (seeded) mixes of take-next, complete/release/reject with next, named
// claims and expiries, in-process on a manual clock.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OperationName } from '../../src/service/operations.ts';
import { MonitorService } from '../../src/service/service.ts';
import { Store } from '../../src/store/store.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { tempDir } from '../support/server-process.ts';
import { replyOf } from '../support/invoke-reply.ts';

let service: MonitorService | undefined;
afterEach(() => {
  service?.close();
  service = undefined;
});

function open(path: string, clock: ManualClock): MonitorService {
  service = new MonitorService({ store: Store.open({ path }), clock, log: () => {} });
  clock.idle = async () => {
    await service?.settle();
    await new Promise((done) => setImmediate(done));
  };
  return service;
}

async function run(name: OperationName, input: Record<string, unknown>, bearer?: string): Promise<any> {
  return replyOf(service!, name, input, bearer);
}

function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const plain = (value: unknown) => JSON.parse(JSON.stringify(value ?? null));

describe('a restart after many lease cycles', () => {
  it('restores every lease, the monitor state and the order of take-next exactly; fences keep growing', async () => {
    const path = join(tempDir(), 'state.db');
    const clock = new ManualClock(Date.parse('2026-12-01T00:00:00.000Z'));
    open(path, clock);
    const subjects = Array.from({ length: 120 }, (_, i) => `job-${i}`);
    const created = await run('monitors/create', { id: 'work', capabilities: ['observe', 'act'] });
    const owner = created.owner_token as string;
    for (const subject of subjects) await run('monitors/publish', { id: 'work', type: 'test.job', subject }, owner);
    const workers: Array<{ id: string; token: string; held: Map<string, number> }> = [];
    for (let i = 0; i < 4; i++) {
      const s = await run('feeds/subscribe', { monitor: 'work', subscriber: `agent:w${i}`, capabilities: ['act'] }, owner);
      workers.push({ id: s.subscription.id, token: s.token, held: new Map() });
    }
    const next = random(46);
    let maxFence = 0;
    const granted = (w: (typeof workers)[number], reply: any) => {
      for (const l of reply.leases ?? (reply.lease && reply.lease.state === 'held' ? [reply.lease] : [])) {
        expect(l.fence).toBeGreaterThan(maxFence);
        maxFence = l.fence;
        w.held.set(l.subject, l.fence);
      }
      if (reply.next) granted(w, reply.next);
    };
    for (let step = 0; step < 400; step++) {
      // The definition changes once midway: the rows written after carry the new one.
      if (step === 200) expect(await run('monitors/update', { id: 'work', reason: 'test', patch: { description: 'halfway' } }, owner)).toMatchObject({ status: 200 });
      const w = workers[Math.floor(next() * workers.length)]!;
      const held = [...w.held];
      const roll = next();
      const base = { subscription: w.id };
      if (roll < 0.1) {
        // Time passes: leases of 30 s lapse and are recorded as expired.
        await clock.advance(31_000);
        for (const other of workers) other.held.clear();
      } else if (held.length === 0 || roll < 0.35) {
        granted(w, await run('leases/claim', { ...base, next: true, lease_duration_seconds: 30 }, w.token));
      } else if (roll < 0.45) {
        const subject = subjects[Math.floor(next() * subjects.length)]!;
        const reply = await run('leases/claim', { ...base, subject, lease_duration_seconds: 30 }, w.token);
        if (reply.status === 201 && reply.idempotent === false) granted(w, reply);
      } else {
        const [subject, fence] = held[Math.floor(next() * held.length)]!;
        const action = roll < 0.75 ? 'complete' : roll < 0.88 ? 'release' : 'reject';
        const body = action === 'complete' ? { outcome: { step } } : action === 'reject' ? { reason: `step ${step}` } : {};
        const reply = await run(`leases/${action}` as OperationName, { ...base, subject, fence, next: next() < 0.5, ...body }, w.token);
        w.held.delete(subject);
        if (reply.status < 300) granted(w, reply);
      }
    }
    await service!.settle();
    const feed = service!.feed('work')!;
    const before = new Map(subjects.map((s) => [s, plain(service!.leaseRows.current(feed.key, s))]));
    expect([...before.values()].filter((l) => l !== null).length).toBeGreaterThan(30);
    const stateBefore = await run('monitors/state', { id: 'work' }, owner);
    const monitorBefore = await run('monitors/get', { id: 'work' }, owner);
    // The oldest subject free for take-next: never leased, or free (released, rejected, expired).
    const oldestFree = subjects.find((s) => {
      const l = service!.leaseRows.current(feed.key, s);
      return l === undefined || (l.state === 'free' && l.record.holder === null);
    });
    expect(oldestFree).toBeDefined();
    service!.close();
    service = undefined;

    open(path, clock);
    const reopened = service!.feed('work')!;
    for (const s of subjects) expect({ s, lease: plain(service!.leaseRows.current(reopened.key, s)) }).toEqual({ s, lease: before.get(s) });
    expect(await run('monitors/state', { id: 'work' }, owner)).toEqual(stateBefore);
    expect(await run('monitors/get', { id: 'work' }, owner)).toEqual(monitorBefore);
    expect(monitorBefore.monitor?.description ?? monitorBefore.description).toBe('halfway');
    const w = workers[0]!;
    const taken = await run('leases/claim', { subscription: w.id, next: true, lease_duration_seconds: 30 }, w.token);
    expect(taken).toMatchObject({ status: 201, lease: { subject: oldestFree } });
    expect(taken.fence).toBeGreaterThan(maxFence);
    expect(taken.fence).toBe(stateBefore.head + 1);
  });
});
