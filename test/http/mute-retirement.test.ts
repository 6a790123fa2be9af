// Mute retirement (§9): with --retire-after-mute 1 a subscription that neither
// pulls nor acks is retired by the server on time; pulling keeps it alive.
import { describe, expect, it } from 'vitest';
import { call, createMonitor, subscribe } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { readFeed, sleep, useServer, vigilType } from './fixtures.ts';

describe.each(transports)('mute retirement over %s', (transport) => {
  const server = useServer({ transport, args: ['--retire-after-mute', '1'] });

  it('retires a silent subscription by itself, keeps a pulling one alive', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const silent = await subscribe(server.base, { monitor: id, subscriber: 'silent' }, ownerToken);
    const busy = await subscribe(server.base, { monitor: id, subscriber: 'busy' }, ownerToken);
    const pull = (sub: { id: string; token: string }) =>
      call(server.base, 'GET', `/subscriptions/${sub.id}/pull`, { token: sub.token });
    // No request touches `silent`; `busy` pulls well within its mute period.
    for (let i = 0; i < 6; i++) {
      await sleep(300);
      expect((await pull(busy)).status).toBe(200);
    }
    const retiredEntries = (await readFeed(server.base, id, ownerToken)).filter((o) => o.type === vigilType('subscription_retired'));
    expect(retiredEntries).toHaveLength(1);
    expect(retiredEntries[0].actor).toBe('system:vigil');
    expect(retiredEntries[0].data.payload).toMatchObject({ reason: 'mute', subscription: silent.id });

    expect((await pull(busy)).body.subscription).toBe(busy.id);
    const refused = await pull(silent);
    expect(refused.status).toBe(404);
    expect(refused.body.retired).toBe(true);
    const state = await call(server.base, 'GET', `/monitors/${id}/state`, { token: ownerToken });
    // busy and the reader subscription of readFeed are live.
    expect(state.body.counters.subscriptions_active).toBe(2);
  });

  it('a subscription-level mute period overrides the server default', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const patient = await subscribe(server.base, { monitor: id, subscriber: 'patient', retire_after_mute_seconds: 30 }, ownerToken);
    await sleep(1500);
    const reply = await call(server.base, 'GET', `/subscriptions/${patient.id}/pull`, { token: patient.token });
    expect(reply.status).toBe(200);
  });
});
