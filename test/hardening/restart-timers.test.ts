// After kill -9 and a restart, timers resume from stored deadlines (§9, §12):
// a lease expires at its stored time and a muted subscription is retired on
// time, with no request arriving; a lease that expired while the server was
// down is expired when it comes back.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { stablePort, startServerProcess, tempDir, transports } from '../support/server-process.ts';
import { leaseType, readAll, sleep } from './support.ts';
import { scaled } from '../support/time-scale.ts';

const retiredType = 'ai.vigil.monitor.subscription_retired';
/** Timers fire on the server's clock; allow for its timer resolution and a busy test machine. */
const slackMs = 1500;

describe.each(transports)('timers after kill -9 over %s', (transport) => {
  it('a held lease expires at its stored time and a muted subscription is retired on time', async () => {
    const state = join(tempDir(), 'state.db');
    const port = await stablePort();
    let server = await startServerProcess({ transport, state, port });
    const m = await createMonitor(server.base, { capabilities: ['observe', 'act'] });
    for (const subject of ['job-running', 'job-down']) {
      expect((await publish(server.base, m.id, m.ownerToken, { type: 'app.job', subject })).status).toBe(201);
    }
    const worker = await subscribe(server.base, { monitor: m.id, subscriber: 'agent:worker', capabilities: ['act'] }, m.ownerToken);
    const claim = (subject: string, seconds: number) =>
      call(server.base, 'POST', `/subscriptions/${worker.id}/leases/claim`, {
        token: worker.token,
        body: { subject, lease_duration_seconds: seconds },
      });
    const running = await claim('job-running', 9);
    const down = await claim('job-down', 1);
    expect([running.status, down.status]).toEqual([201, 201]);
    const runningExpires = Date.parse(running.body.expires);
    const downExpires = Date.parse(down.body.expires);
    const muted = await subscribe(server.base, { monitor: m.id, subscriber: 'agent:muted', retire_after_mute_seconds: 9 }, m.ownerToken);
    const muteDeadline = Date.parse(muted.reply.body.subscription.created) + 9000;

    await server.kill();
    await sleep(1500); // job-down expires while no server runs
    const restartedAt = Date.now();
    server = await startServerProcess({ transport, state, port });
    try {
      expect(Date.now()).toBeLessThan(Math.min(runningExpires, muteDeadline) - 500); // the restart was in time
      // No request reaches the server until both deadlines have passed.
      await sleep(Math.max(runningExpires, muteDeadline) + slackMs + 200 - Date.now());

      const reader = await subscribe(server.base, { monitor: m.id, subscriber: 'agent:reader' }, m.ownerToken);
      const feed = await readAll(server.base, reader);
      const expiry = (subject: string) =>
        feed.filter((o) => o.type === leaseType && o.subject === subject && o.data.payload.action === 'expired');

      const [runningExpiry, ...moreRunning] = expiry('job-running');
      expect(moreRunning).toEqual([]);
      expect(runningExpiry.data.payload.holder).toBe(`sub:${worker.id}`);
      const runningAt = Date.parse(runningExpiry.time);
      expect(runningAt).toBeGreaterThanOrEqual(runningExpires);
      expect(runningAt).toBeLessThan(runningExpires + slackMs);

      const [downExpiry, ...moreDown] = expiry('job-down');
      expect(moreDown).toEqual([]);
      const downAt = Date.parse(downExpiry.time);
      expect(downAt).toBeGreaterThanOrEqual(Math.max(downExpires, restartedAt));

      const retired = feed.filter((o) => o.type === retiredType && o.data.payload.subscription === muted.id);
      expect(retired).toHaveLength(1);
      expect(retired[0].data.payload.reason).toBe('mute');
      const retiredAt = Date.parse(retired[0].time);
      expect(retiredAt).toBeGreaterThanOrEqual(muteDeadline);
      expect(retiredAt).toBeLessThan(muteDeadline + slackMs);

      // The expired lease is free for someone else; the retired subscription no longer pulls.
      const other = await subscribe(server.base, { monitor: m.id, subscriber: 'agent:other', capabilities: ['act'] }, m.ownerToken);
      const taken = await call(server.base, 'POST', `/subscriptions/${other.id}/leases/claim`, {
        token: other.token,
        body: { subject: 'job-running' },
      });
      expect(taken.status).toBe(201);
      const pull = await call(server.base, 'GET', `/subscriptions/${muted.id}/pull`, { token: muted.token });
      expect(pull.status).toBeGreaterThanOrEqual(400);
    } finally {
      await server.stop();
    }
  }, scaled(30_000));
});
