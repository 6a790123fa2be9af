// Issue 42 point 9: a webhook that follows a monitor has its access checked
// at each delivery, not only at registration. A registration made while the
// monitor was public kept receiving after the owner made it private; now its
// pending retry is not sent (the delivery fails, saying why) and nothing new
// is queued for it, while a registration made with the owner's token goes on
// receiving (the barrier: what the first one did not get would have arrived
// by then).
import { describe, expect, it } from 'vitest';
import type { DeliveryTimers } from '../../src/cloud/delivery-queue.ts';
import { call, createMonitor } from '../support/client.ts';
import { makeKey, useCloudServer } from './fixtures.ts';
import { startReceiver } from './receiver.ts';

const secret = 'a-secret-of-24-characters';

/** First attempts run at once; retries wait until the test releases them. */
function heldRetries(): DeliveryTimers & { release(): void } {
  const held: Array<() => void> = [];
  return {
    now: () => Date.now(),
    after(ms, run) {
      if (ms > 0) {
        held.push(run);
        return () => held.splice(held.indexOf(run), 1);
      }
      const timer = setTimeout(run, 0);
      return () => clearTimeout(timer);
    },
    release() {
      for (const run of held.splice(0)) run();
    },
  };
}

describe('monitor.observation followers and a monitor made private', () => {
  const timers = heldRetries();
  const server = useCloudServer({ cloud: { allowInsecureWebhooks: true, timers } });
  const base = () => `${server.url}/mp/v0`;

  it('stops delivering to a follower that only saw the monitor as public, retries included', async () => {
    const [stranger, insider] = [await makeKey(server.url, 'stranger'), await makeKey(server.url, 'insider')];
    const [seen, owned] = [await startReceiver(secret), await startReceiver(secret)];
    try {
      const { id: monitor, ownerToken } = await createMonitor(base(), { visibility: 'public' });
      const follow = (key: string, url: string, token?: string) =>
        call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'monitor.observation', url, secret, monitor, ...(token && { token }) } });
      const hook = (await follow(stranger, seen.url)).body;
      expect(hook.id).toMatch(/^wh_/);
      expect((await follow(insider, owned.url, ownerToken)).status).toBe(201);
      // The token is kept only to check access again: never shown.
      expect(JSON.stringify((await call(server.url, 'GET', '/v1/webhooks', { token: insider })).body)).not.toMatch(/token/);
      const publish = (n: number) => call(base(), 'POST', `/monitors/${monitor}/observations`, { token: ownerToken, body: { type: 'ci.build', data: { n } } });
      const cloud = server.server.cloud!;

      seen.answers.push(503);
      await publish(1);
      await seen.waitFor(1);
      await owned.waitFor(1);
      await cloud.queue.idle();

      const update = await call(base(), 'POST', `/monitors/${monitor}/update`, { token: ownerToken, body: { reason: 'no longer public', patch: { visibility: 'private' } } });
      expect(update.status, JSON.stringify(update.body)).toBe(200);
      // Its retry comes due: not sent, and failed for good, saying why.
      timers.release();
      await cloud.queue.idle();
      const log = (await call(server.url, 'GET', `/v1/webhooks/${hook.id}/deliveries`, { token: stranger })).body.deliveries;
      expect(log).toEqual([
        expect.objectContaining({
          status: 'failed',
          attempts: 2,
          error: `monitor "${monitor}" is no longer visible to this registration (made private, or its token changed)`,
        }),
      ]);
      // New observations go to the owner's token only.
      await publish(2);
      await owned.waitFor(2);
      await cloud.store.settled();
      await cloud.queue.idle();
      expect(seen.received).toHaveLength(1);
      expect((await call(server.url, 'GET', `/v1/webhooks/${hook.id}/deliveries`, { token: stranger })).body.deliveries).toHaveLength(1);
      expect(owned.received.map((r) => r.body.data.data.n)).toEqual([1, 2]);
    } finally {
      await Promise.all([seen.close(), owned.close()]);
    }
  });
});
