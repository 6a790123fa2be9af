// Idle subscription and lease actors leave memory and come back from their
// rows, with their timers intact.
import { afterEach, describe, expect, it } from 'vitest';
import { invoke, type OperationName } from '../../src/service/operations.ts';
import { MonitorService } from '../../src/service/service.ts';
import { Store } from '../../src/store/store.ts';

let service: MonitorService | undefined;
afterEach(() => service?.close());

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
    service = new MonitorService({
      store: Store.open({ path: ':memory:' }),
      residentActors: 1,
      retireAfterMuteSeconds: 1,
      log: () => {},
    });
    const created = await run('monitors/create', { id: 'mute', visibility: 'public' });
    const first = await run('feeds/subscribe', { monitor: 'mute', subscriber: 'agent:a' });
    await run('feeds/subscribe', { monitor: 'mute', subscriber: 'agent:b' });
    await service.settle();
    await new Promise((r) => setImmediate(r));
    expect(service.system.subscriptions.isResident(first.subscription.id)).toBe(false);
    await new Promise((r) => setTimeout(r, 1500));
    const state = await run('monitors/state', { id: 'mute' }, created.owner_token);
    expect(state.counters.subscriptions_active).toBe(0);
    const pulled = await invoke(service, 'feeds/pull', { subscription: first.subscription.id }, { caller: { bearer: first.token } }).catch((e) => e);
    expect(pulled.code).toBe('UNAVAILABLE');
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
});
