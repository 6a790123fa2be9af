// Idle subscription and lease actors leave memory and come back from their
// rows, with their timers intact. Timers run on a manual clock.
import { afterEach, describe, expect, it } from 'vitest';
import { openFeedStream } from '../../src/service/feed-stream.ts';
import { invoke, type OperationName } from '../../src/service/operations.ts';
import { MonitorService } from '../../src/service/service.ts';
import { Store } from '../../src/store/store.ts';
import { ManualClock, turns } from '../support/manual-clock.ts';

let service: MonitorService | undefined;
afterEach(() => service?.close());

/** A clock that moves only when the test says, and lets the service finish each timer's work. */
function manualClock(): ManualClock {
  const clock = new ManualClock();
  clock.idle = async () => {
    await service?.settle();
    await turns();
  };
  return clock;
}

async function run(name: OperationName, input: Record<string, unknown>, bearer?: string): Promise<any> {
  return (await invoke(service!, name, input, { caller: { bearer } })).body;
}

describe('bounded actor residency', () => {
  it('keeps at most the cap of subscription actors resident, restores the others with their cursor', async () => {
    service = new MonitorService({ store: Store.open({ path: ':memory:' }), residentActors: 3, log: () => {} });
    const created = await run('monitors/create', { id: 'cap', visibility: 'public' });
    const owner = created.owner_token;
    await run('monitors/publish', { id: 'cap', type: 'test.one' }, owner);
    const subs = [];
    for (let i = 0; i < 10; i++) {
      const s = await run('feeds/subscribe', { monitor: 'cap', subscriber: `agent:${i}` });
      subs.push({ id: s.subscription.id, token: s.token });
      await run('feeds/ack', { subscription: s.subscription.id, cursor: 2 }, s.token);
    }
    await service.settle();
    await new Promise((r) => setImmediate(r));
    expect(service.system.subscriptions.size).toBeLessThanOrEqual(3);
    // The first subscription went cold; it comes back from its row with its cursor.
    const pulled = await run('feeds/pull', { subscription: subs[0]!.id }, subs[0]!.token);
    expect(pulled.cursor).toBe(2);
    expect(service.system.subscriptions.isResident(subs[0]!.id)).toBe(true);
  });

  it('retires a cold subscription at its mute deadline, with no request arriving', async () => {
    const clock = manualClock();
    service = new MonitorService({
      store: Store.open({ path: ':memory:' }),
      residentActors: 1,
      retireAfterMuteSeconds: 1,
      clock,
      log: () => {},
    });
    const created = await run('monitors/create', { id: 'mute', visibility: 'public' });
    await run('feeds/subscribe', { monitor: 'mute', subscriber: 'agent:a' });
    // The cap is reached: this one is left as a row, with its deadline in the scheduler.
    const cold = await run('feeds/subscribe', { monitor: 'mute', subscriber: 'agent:b' });
    expect(service.system.subscriptions.isResident(cold.subscription.id)).toBe(false);
    await clock.advance(999);
    expect((await run('monitors/state', { id: 'mute' }, created.owner_token)).counters.subscriptions_active).toBe(2);
    await clock.advance(1);
    const state = await run('monitors/state', { id: 'mute' }, created.owner_token);
    expect(state.counters.subscriptions_active).toBe(0);
    const pulled = await invoke(service, 'feeds/pull', { subscription: cold.subscription.id }, { caller: { bearer: cold.token } }).catch((e) => e);
    // A retired subscription's token (§17): 404 with the kept cursor.
    expect(pulled.code).toBe('NOT_FOUND');
    expect(pulled.extra.retired).toBe(true);
  });

  it('does not let a waiting pull lose its actor to eviction', async () => {
    service = new MonitorService({ store: Store.open({ path: ':memory:' }), residentActors: 1, log: () => {} });
    const created = await run('monitors/create', { id: 'hold', visibility: 'public' });
    const waiting = await run('feeds/subscribe', { monitor: 'hold', subscriber: 'agent:wait', from: 'head', filter: { types: 'test.*' } });
    const pull = run('feeds/pull', { subscription: waiting.subscription.id, wait: 5 }, waiting.token);
    for (let i = 0; i < 5; i++) await run('feeds/subscribe', { monitor: 'hold', subscriber: `agent:other-${i}` });
    expect(service.system.subscriptions.isResident(waiting.subscription.id)).toBe(true);
    await run('monitors/publish', { id: 'hold', type: 'test.wake' }, created.owner_token);
    const page = await pull;
    expect(page.observations.map((o: any) => JSON.parse(o.text).type)).toContain('test.wake');
  });

  it('leaves new subscriptions past the cap as rows, usable at once, even within the turn they were created', async () => {
    service = new MonitorService({ store: Store.open({ path: ':memory:' }), residentActors: 2, log: () => {} });
    const created = await run('monitors/create', { id: 'rows', visibility: 'public' });
    const made = await Promise.all(
      Array.from({ length: 6 }, (_, i) => run('feeds/subscribe', { monitor: 'rows', subscriber: `agent:r${i}` })),
    );
    // Re-keying the last one in the same turn reads its row before it is committed.
    const last = made.at(-1)!;
    const rekeyed = await run('feeds/subscribe', { monitor: 'rows', subscriber: 'agent:r5' }, last.token);
    expect(rekeyed.subscription.id).toBe(last.subscription.id);
    expect(service.system.subscriptions.size).toBeLessThanOrEqual(3);
    await run('monitors/publish', { id: 'rows', type: 'test.row' }, created.owner_token);
    const page = await run('feeds/pull', { subscription: made[3]!.subscription.id }, made[3]!.token);
    expect(page.observations.map((o: any) => JSON.parse(o.text).type)).toContain('test.row');
  });

  it('lets open streams\' subscription actors leave memory, and still ends a stream whose subscription is retired or re-keyed', async () => {
    service = new MonitorService({ store: Store.open({ path: ':memory:' }), residentActors: 2, log: () => {} });
    const created = await run('monitors/create', { id: 'streams', visibility: 'public' });
    const subs = [];
    for (let i = 0; i < 6; i++) subs.push(await run('feeds/subscribe', { monitor: 'streams', subscriber: `agent:s${i}`, from: 'head' }));
    const seen = subs.map(() => [] as string[]);
    const failures = subs.map(() => [] as string[]);
    subs.forEach((s, i) => {
      const stream = openFeedStream(service!, s.subscription.id, {}, { bearer: s.token }, undefined);
      stream.start({
        observations: (batch) => {
          for (const { body } of batch) seen[i]!.push(JSON.parse(body).type);
          return true;
        },
        heartbeat() {},
        hasRoom: () => true,
        whenRoom() {},
        failed: (error) => failures[i]!.push(error.code),
      });
    });
    await run('monitors/publish', { id: 'streams', type: 'test.first' }, created.owner_token);
    await new Promise((r) => setImmediate(r));
    // Six open streams, yet no more actors than the cap stay in memory.
    expect(service.system.subscriptions.size).toBeLessThanOrEqual(2);
    expect(seen.every((types) => types.includes('test.first'))).toBe(true);
    const retiredCold = subs[0]!;
    expect(service.system.subscriptions.isResident(retiredCold.subscription.id)).toBe(false);
    await run('feeds/retire', { subscription: retiredCold.subscription.id }, retiredCold.token);
    await run('feeds/renew', { subscription: subs[1]!.subscription.id }, subs[1]!.token);
    await run('monitors/publish', { id: 'streams', type: 'test.second' }, created.owner_token);
    await new Promise((r) => setImmediate(r));
    expect(failures[0]).toEqual(['UNAVAILABLE']);
    expect(failures[1]).toEqual(['UNAVAILABLE']);
    expect(seen[0]).not.toContain('test.second');
    expect(seen[1]).not.toContain('test.second');
    for (let i = 2; i < 6; i++) {
      expect(failures[i]).toEqual([]);
      expect(seen[i]).toContain('test.second');
    }
  });

  it('keeps the cold subscriptions of open streams from mute retirement without bringing their actors back', async () => {
    const started: string[] = [];
    const clock = manualClock();
    service = new MonitorService({
      store: Store.open({ path: ':memory:' }),
      residentActors: 1,
      retireAfterMuteSeconds: 1,
      clock,
      log: () => {},
      inspect: (event) => {
        const id = (event.actorRef as unknown as { id: string }).id;
        if (event.type === '@xstate.actor' && id.startsWith('subscription:')) started.push(id);
      },
    });
    const created = await run('monitors/create', { id: 'kept', visibility: 'public' });
    const subs = [];
    for (let i = 0; i < 4; i++) subs.push(await run('feeds/subscribe', { monitor: 'kept', subscriber: `agent:k${i}`, from: 'head' }));
    const streams = subs.map((s) => {
      const stream = openFeedStream(service!, s.subscription.id, {}, { bearer: s.token }, undefined);
      stream.start({ observations: () => true, heartbeat() {}, hasRoom: () => true, whenRoom() {}, failed() {} });
      return stream;
    });
    await service.settle();
    const startedBefore = started.length;
    // Two and a half mute periods: each open stream records activity every third of one.
    await clock.advance(2500);
    let state = await run('monitors/state', { id: 'kept' }, created.owner_token);
    expect(state.counters.subscriptions_active).toBe(4);
    // Activity on a subscription that is only a row rewrote the row: no actor was built for it.
    expect(started.length).toBe(startedBefore);
    expect(service.system.subscriptions.size).toBeLessThanOrEqual(1);
    // Once the streams close, the mute timer runs from their last activity.
    for (const stream of streams) stream.close();
    await clock.advance(1600);
    state = await run('monitors/state', { id: 'kept' }, created.owner_token);
    expect(state.counters.subscriptions_active).toBe(0);
  });

  it('ends an open stream whose subscription another node retired, once the monitor is reloaded whole', async () => {
    service = new MonitorService({ store: Store.open({ path: ':memory:' }), residentActors: 1, log: () => {} });
    const created = await run('monitors/create', { id: 'reload', visibility: 'public' });
    const subs = [];
    for (let i = 0; i < 3; i++) subs.push(await run('feeds/subscribe', { monitor: 'reload', subscriber: `agent:r${i}`, from: 'head' }));
    const failures = subs.map(() => [] as string[]);
    subs.forEach((s, i) => {
      openFeedStream(service!, s.subscription.id, {}, { bearer: s.token }, undefined).start({
        observations: () => true,
        heartbeat() {},
        hasRoom: () => true,
        whenRoom() {},
        failed: (error) => failures[i]!.push(error.code),
      });
    });
    // What a cluster node finds in the database after another node retired the first subscription.
    const retired = subs[0]!.subscription.id;
    const record = service.subscriptionRows.current(retired)!.record;
    service.store.putSubscription(retired, () => ({ state: 'retired', record }));
    await service.settle();
    const feed = service.feed('reload')!;
    service.reloadMonitor({ row: { ...feed.row(), stats: structuredClone(feed.stats) }, contradictions: [], changed: 'all' });
    await run('monitors/publish', { id: 'reload', type: 'test.after' }, created.owner_token);
    await new Promise((r) => setImmediate(r));
    expect(failures).toEqual([['UNAVAILABLE'], [], []]);
  });
});
