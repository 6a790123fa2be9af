// Take-next's rules (protocol.md §21), in-process on a manual clock: the
// oldest free subject that matched the subscription's filters, never a held,
// completed or dead-lettered one, expiry putting a subject back in line,
// NO_WORK recording nothing; complete/release/reject with next in one commit
// (a failed commit completes nothing and grants nothing); several completions
// all or nothing; and a long random run checked against a model built from
// the clients' own replies: every take grants exactly the oldest free subject.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/actors/clock.ts';
import type { OperationName } from '../../src/service/operations.ts';
import { MonitorService } from '../../src/service/service.ts';
import { Store } from '../../src/store/store.ts';
import { tempDir } from '../support/server-process.ts';
import { replyOf } from '../support/invoke-reply.ts';

/** Time moves only when the test says so; timers due by then fire in order. */
class ManualClock implements Clock {
  private time = Date.parse('2026-12-01T00:00:00.000Z');
  private timers: Array<{ due: number; callback: () => void; id: number }> = [];
  private ids = 0;
  now(): number {
    return this.time;
  }
  setTimeout(callback: () => void, delayMs: number): unknown {
    const id = ++this.ids;
    this.timers.push({ due: this.time + Math.max(0, delayMs), callback, id });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.due <= until).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = Math.max(this.time, due.due);
      due.callback();
    }
    this.time = until;
  }
}

let service: MonitorService | undefined;
let clock: ManualClock;
afterEach(() => {
  service?.close();
  service = undefined;
});

function start(path = ':memory:'): MonitorService {
  clock = new ManualClock();
  service = new MonitorService({ store: Store.open({ path }), clock, log: () => {} });
  return service;
}

/** A reply body, or the refusal's body with its status. */
async function run(name: OperationName, input: Record<string, unknown>, bearer?: string): Promise<any> {
  return replyOf(service!, name, input, bearer);
}

async function workplace(subjects: Array<[type: string, subject: string]>, filter?: Record<string, unknown>) {
  const created = await run('monitors/create', { id: 'work', capabilities: ['observe', 'act'], types: ['test.job', 'test.noise'] });
  const owner = created.owner_token as string;
  for (const [type, subject] of subjects) await run('monitors/publish', { id: 'work', type, subject }, owner);
  const worker = async (name: string) => {
    const s = await run('feeds/subscribe', { monitor: 'work', subscriber: `agent:${name}`, capabilities: ['act'], ...(filter && { filter }) }, owner);
    return { id: s.subscription.id as string, token: s.token as string };
  };
  return { owner, worker };
}

const lease = (sub: { id: string; token: string }, action: string, body: Record<string, unknown> = {}) =>
  run(`leases/${action}` as OperationName, { subscription: sub.id, ...body }, sub.token);
const headOf = async (owner: string) => (await run('monitors/get', { id: 'work' }, owner)).monitor?.head ?? (await run('monitors/get', { id: 'work' }, owner)).head;
const jobs = (n: number): Array<[string, string]> => Array.from({ length: n }, (_, i) => ['test.job', `job-${i}`]);

describe('take-next', () => {
  it('grants the oldest free subject, up to count, then NO_WORK recording nothing', async () => {
    start();
    const { owner, worker } = await workplace(jobs(5));
    const a = await worker('a');
    const b = await worker('b');
    const first = await lease(a, 'claim', { next: true, lease_duration_seconds: 60 });
    expect(first).toMatchObject({ status: 201, lease: { subject: 'job-0', holder: `sub:${a.id}`, state: 'held' } });
    expect(first.fence).toBe(first.lease.fence);
    const many = await lease(b, 'claim', { next: true, count: 3 });
    expect(many.status).toBe(201);
    expect(many.leases.map((l: any) => l.subject)).toEqual(['job-1', 'job-2', 'job-3']);
    const last = await lease(a, 'claim', { next: true, count: 10 });
    expect(last.leases.map((l: any) => l.subject)).toEqual(['job-4']);
    const head = await headOf(owner);
    const none = await lease(b, 'claim', { next: true });
    expect(none).toMatchObject({ status: 404, code: 'NO_WORK' });
    expect(none.rejected_seq).toBeUndefined();
    expect(await headOf(owner)).toBe(head);
  });

  it('never grants a held, completed or dead-lettered subject; expiry and release put a subject back at its place', async () => {
    start();
    const { worker } = await workplace(jobs(4));
    const a = await worker('a');
    const b = await worker('b');
    // job-0 is held by a named claim, job-1 completed, job-2 dead-lettered.
    await lease(a, 'claim', { subject: 'job-0', lease_duration_seconds: 30 });
    await lease(a, 'claim', { subject: 'job-1' });
    await lease(a, 'complete', { subject: 'job-1' });
    for (let i = 0; i < 5; i++) {
      expect((await lease(a, 'claim', { subject: 'job-2' })).status).toBe(201);
      await lease(a, 'reject', { subject: 'job-2' });
    }
    expect((await lease(b, 'claim', { next: true, count: 10 })).leases.map((l: any) => l.subject)).toEqual(['job-3']);
    expect((await lease(b, 'claim', { next: true })).code).toBe('NO_WORK');
    clock.advance(30_001);
    // Expired (a grant lasts its duration from the millisecond after the claim's): job-0 is free again, and first in line.
    const again = await lease(b, 'claim', { next: true, lease_duration_seconds: 10 });
    expect(again.lease.subject).toBe('job-0');
    // A completed subject claimed again by name and released is back in line.
    await lease(a, 'claim', { subject: 'job-1' });
    await lease(a, 'release', { subject: 'job-1' });
    expect((await lease(b, 'claim', { next: true })).lease.subject).toBe('job-1');
  });

  it('takes only subjects that appeared on an observation matching the filters, in the order they first matched', async () => {
    start();
    const { worker } = await workplace(
      [
        ['test.other', 'x'],
        ['test.other', 'y'],
        ['test.job', 'z'],
        ['test.job', 'y'],
      ],
      { types: ['test.job'] },
    );
    const a = await worker('a');
    const taken = await lease(a, 'claim', { next: true, count: 10 });
    expect(taken.leases.map((l: any) => l.subject)).toEqual(['z', 'y']);
  });

  it('gives each grant the seq of its own claim observation as its fence, also when it takes over a lapsed lease', async () => {
    start();
    const { owner, worker } = await workplace(jobs(1));
    const a = await worker('a');
    const b = await worker('b');
    await lease(a, 'claim', { next: true, lease_duration_seconds: 5 });
    // Past the end, before the timer ran: the claim records the expiry first.
    clock.advance(4_999);
    (clock as unknown as { time: number }).time += 10;
    const taken = await lease(b, 'claim', { subject: 'job-0' });
    expect(taken.status).toBe(201);
    const reader = await run('feeds/subscribe', { monitor: 'work', subscriber: 'agent:reader' }, owner);
    const page = await run('feeds/pull', { subscription: reader.subscription.id, limit: 1000 }, reader.token);
    const claims = page.observations.map((o: any) => JSON.parse(o.text)).filter((o: any) => o.data.payload?.action === 'claim');
    expect(claims.map((o: any) => Number(o.id))).toEqual(claims.map((o: any) => o.data.payload.fence));
    expect(claims.at(-1).data.payload.fence).toBe(taken.fence);
  });

  it('waits for work up to `wait` seconds: a publish or a release wakes it', async () => {
    start();
    const { owner, worker } = await workplace(jobs(1));
    const a = await worker('a');
    const b = await worker('b');
    const held = await lease(a, 'claim', { next: true });
    const waiting = lease(b, 'claim', { next: true, wait: 30 });
    await new Promise((r) => setImmediate(r));
    await lease(a, 'release', { subject: held.lease.subject, fence: held.fence });
    expect((await waiting).lease.subject).toBe('job-0');
    const second = lease(a, 'claim', { next: true, wait: 30 });
    await new Promise((r) => setImmediate(r));
    await run('monitors/publish', { id: 'work', type: 'test.job', subject: 'late' }, owner);
    expect((await second).lease.subject).toBe('late');
    const third = lease(a, 'claim', { next: true, wait: 2 });
    await new Promise((r) => setImmediate(r));
    clock.advance(2_000);
    expect(await third).toMatchObject({ status: 404, code: 'NO_WORK' });
  });

  it('refuses fields that do not go together, naming them', async () => {
    start();
    const { worker } = await workplace(jobs(1));
    const a = await worker('a');
    expect(await lease(a, 'claim', { next: true, subject: 'job-0' })).toMatchObject({ status: 400, code: 'INVALID', field: 'subject' });
    expect(await lease(a, 'claim', { subject: 'job-0', count: 2 })).toMatchObject({ status: 400, field: 'count' });
    expect(await lease(a, 'claim', {})).toMatchObject({ status: 400, field: 'subject' });
    expect(await lease(a, 'claim', { next: true, count: 101 })).toMatchObject({ status: 400, field: 'count' });
    expect(await lease(a, 'claim', { next: true, wait: 51 })).toMatchObject({ status: 400, field: 'wait' });
    expect(await lease(a, 'complete', { next: { count: 0 }, subject: 'job-0' })).toMatchObject({ status: 400, field: 'next.count' });
    expect(await lease(a, 'complete', { items: [{ subject: 'job-0' }], subject: 'job-0' })).toMatchObject({ status: 400, field: 'subject' });
    expect(await lease(a, 'complete', { items: [{ subject: 'job-0' }, { subject: 'job-0' }] })).toMatchObject({ status: 400, field: 'items.1.subject' });
  });
});

describe('complete, release or reject and take the next', () => {
  it('does both in one request: the next subject, never the one just released', async () => {
    start();
    const { worker } = await workplace(jobs(3));
    const a = await worker('a');
    const first = await lease(a, 'claim', { next: true });
    const done = await lease(a, 'complete', { subject: first.lease.subject, fence: first.fence, next: true });
    expect(done).toMatchObject({ status: 200, ok: true, lease: { subject: 'job-0', state: 'completed' }, next: { subject: 'job-1', state: 'held' } });
    const released = await lease(a, 'release', { subject: 'job-1', fence: done.next.fence, next: { count: 5 } });
    expect(released.lease.state).toBe('free');
    expect(released.next.map((l: any) => l.subject)).toEqual(['job-2']);
    // job-1 is back in line for the next take.
    expect((await lease(a, 'claim', { next: true })).lease.subject).toBe('job-1');
    const last = await lease(a, 'complete', { subject: 'job-1', next: true });
    expect(last.next).toBeNull();
  });

  it('grants nothing when the completion is refused', async () => {
    start();
    const { worker } = await workplace(jobs(2));
    const a = await worker('a');
    const first = await lease(a, 'claim', { next: true });
    const refused = await lease(a, 'complete', { subject: first.lease.subject, fence: first.fence + 100, next: true });
    expect(refused).toMatchObject({ status: 409, code: 'LEASE_LOST' });
    expect((await lease(a, 'claim', { next: true })).lease.subject).toBe('job-1');
  });

  it('completes nothing and grants nothing when the commit fails, as the restarted server shows', async () => {
    const dir = tempDir('vigil-take-next-');
    const path = join(dir, 'state.db');
    try {
      start(path);
      const { worker } = await workplace(jobs(2));
      const a = await worker('a');
      const first = await lease(a, 'claim', { next: true });
      await service!.settle();
      // Another write of the same batch fails: SQLite rolls the whole transaction back.
      const call = lease(a, 'complete', { subject: first.lease.subject, fence: first.fence, next: true });
      service!.store.commits.append(() => {
        throw new Error('disk I/O error (injected)');
      });
      expect(await call).toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE' });
      service!.close();
      start(path);
      const leases = service!.store.lease(service!.feed('work')!.key, 'job-0');
      expect(leases?.state).toBe('held');
      expect(service!.store.lease(service!.feed('work')!.key, 'job-1')).toBeUndefined();
    } finally {
      service?.close();
      service = undefined;
    }
  });

  it('completes a list of subjects all or nothing', async () => {
    start();
    const { worker } = await workplace(jobs(4));
    const a = await worker('a');
    const taken = (await lease(a, 'claim', { next: true, count: 3 })).leases;
    const items = taken.map((l: any) => ({ subject: l.subject, fence: l.fence, outcome: 'ok' }));
    items[2].fence += 1;
    const refused = await lease(a, 'complete', { items, next: true });
    expect(refused).toMatchObject({ status: 409, code: 'LEASE_LOST', item: 2, subject: 'job-2' });
    expect(refused.error).toContain('Nothing was completed');
    for (const l of taken) expect((await lease(a, 'claim', { subject: l.subject })).lease.state).toBe('held');
    items[2].fence -= 1;
    const done = await lease(a, 'complete', { items, next: { count: 2 } });
    expect(done.leases.map((l: any) => l.state)).toEqual(['completed', 'completed', 'completed']);
    expect(done.seqs).toHaveLength(3);
    expect(done.next.map((l: any) => l.subject)).toEqual(['job-3']);
  });
});

describe('take-next over a long random run', () => {
  it('grants exactly the oldest free subject every time, by a model built from the replies', { timeout: 120_000 }, async () => {
    start();
    const { owner, worker } = await workplace([], { types: ['test.job'] });
    const workers = [await worker('w0'), await worker('w1'), await worker('w2')];
    // The model: each subject's place (first matching seq) and what the replies said about it.
    const place = new Map<string, number>();
    const state = new Map<string, { holder: string | null; expires: number; done: boolean; rejects: number; fence: number }>();
    const available = (s: string) => {
      const st = state.get(s);
      return !st || (!st.done && st.rejects < 5 && (st.holder === null || clock.now() >= st.expires));
    };
    const oldest = () => [...place].filter(([s]) => available(s)).sort((a, b) => a[1] - b[1])[0]?.[0];
    let n = 0;
    let grants = 0;
    const random = (k: number) => Math.floor(Math.random() * k);
    for (let step = 0; step < 3000; step++) {
      const w = workers[random(workers.length)]!;
      const holder = `sub:${w.id}`;
      const roll = Math.random();
      if (roll < 0.2) {
        const subject = `s${random(40)}`;
        const type = Math.random() < 0.7 ? 'test.job' : 'test.noise';
        const published = await run('monitors/publish', { id: 'work', type, subject }, owner);
        if (type === 'test.job' && !place.has(subject)) place.set(subject, Number(published.seq ?? published.observation?.id ?? published.id));
        n++;
      } else if (roll < 0.55) {
        const expected = oldest();
        const reply = await lease(w, 'claim', { next: true, lease_duration_seconds: 1 + random(5) });
        if (expected === undefined) {
          expect(reply.code).toBe('NO_WORK');
          continue;
        }
        expect(reply.lease?.subject, `step ${step}: the oldest free subject`).toBe(expected);
        grants++;
        state.set(expected, { ...(state.get(expected) ?? { rejects: 0, done: false }), holder, expires: Date.parse(reply.expires), fence: reply.fence, done: false });
      } else if (roll < 0.75) {
        // End a lease this worker holds: complete, release or reject.
        const mine = [...state].find(([, st]) => st.holder === holder && clock.now() < st.expires);
        if (!mine) continue;
        const [subject, st] = mine;
        const action = ['complete', 'release', 'reject'][random(3)]!;
        const reply = await lease(w, action, { subject, fence: st.fence });
        expect(reply.status, JSON.stringify(reply)).toBe(200);
        st.holder = null;
        if (action === 'complete') st.done = true;
        if (action === 'reject') st.rejects++;
      } else if (roll < 0.8) {
        // A named claim of any subject (even a completed one) mixes with take-next.
        const subject = [...place.keys()][random(place.size)];
        if (!subject) continue;
        const reply = await lease(w, 'claim', { subject, lease_duration_seconds: 2 });
        if (reply.status === 201) state.set(subject, { ...(state.get(subject) ?? { rejects: 0 }), holder, expires: Date.parse(reply.expires), fence: reply.fence, done: false });
      } else {
        clock.advance(random(2500));
      }
    }
    expect(grants).toBeGreaterThan(100);
    expect(n).toBeGreaterThan(100);
  });
});
