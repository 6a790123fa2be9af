// Mute retirement (§9): with a mute period of 1 s a subscription that neither
// pulls nor acks is retired by the server on time, with no request arriving;
// pulling keeps it alive. A rule and a timer: in-process through the HTTP
// door on a manual clock (test/support/door.ts); restart-timers.test.ts shows
// the same timer over a real server that is killed and started again.
import { afterEach, describe, expect, it } from 'vitest';
import { type Door, openDoor } from '../support/door.ts';
import { vigilType } from './fixtures.ts';

let door: Door | undefined;
afterEach(() => door?.close());

describe('mute retirement', () => {
  it('retires a silent subscription by itself at its deadline, keeps a pulling one alive', async () => {
    door = openDoor({ retireAfterMuteSeconds: 1 });
    const { id, ownerToken } = await door.createMonitor({});
    const silent = await door.subscribe({ monitor: id, subscriber: 'silent' }, ownerToken);
    const busy = await door.subscribe({ monitor: id, subscriber: 'busy' }, ownerToken);
    const pull = (sub: { id: string; token: string }) => door!.request('GET', `/subscriptions/${sub.id}/pull`, { token: sub.token });
    const active = async () => (await door!.request('GET', `/monitors/${id}/state`, { token: ownerToken })).body.counters.subscriptions_active;
    // Just before its deadline nothing has happened to `silent`.
    await door.clock.advance(999);
    expect((await pull(busy)).status).toBe(200);
    expect(await active()).toBe(2);
    // No request touches `silent`; `busy` pulls well within its mute period.
    for (let i = 0; i < 6; i++) {
      await door.clock.advance(300);
      expect((await pull(busy)).status).toBe(200);
    }
    expect(await active()).toBe(1);
    const entries = (await door.feed(id, ownerToken)).filter((o) => o.type === vigilType('subscription_retired'));
    expect(entries).toHaveLength(1);
    expect(entries[0].actor).toBe('system:vigil');
    expect(entries[0].data.payload).toMatchObject({ reason: 'mute', subscription: silent.id });

    expect((await pull(busy)).body.subscription).toBe(busy.id);
    const refused = await pull(silent);
    expect(refused.status).toBe(404);
    expect(refused.body.retired).toBe(true);
    // busy and the reader subscription of feed() are live.
    expect(await active()).toBe(2);
  });

  it('a subscription-level mute period overrides the server default', async () => {
    door = openDoor({ retireAfterMuteSeconds: 1 });
    const { id, ownerToken } = await door.createMonitor({});
    const patient = await door.subscribe({ monitor: id, subscriber: 'patient', retire_after_mute_seconds: 30 }, ownerToken);
    const pull = () => door!.request('GET', `/subscriptions/${patient.id}/pull`, { token: patient.token });
    await door.clock.advance(1500);
    expect((await pull()).status).toBe(200);
    // Its own 30 s, counted from that pull.
    await door.clock.advance(29_999);
    expect((await pull()).status).toBe(200);
    await door.clock.advance(30_001);
    const refused = await pull();
    expect(refused.status).toBe(404);
    expect(refused.body.retired).toBe(true);
  });
});
