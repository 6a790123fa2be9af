// The cloud API on a cluster (docs/cloud.md, docs/scaling.md): API keys,
// webhook registrations and deliveries live in PostgreSQL, so every node
// serves every key, a restart of every node loses nothing, a delivery queued
// on a node that dies is sent by another exactly once, and an inbound trigger
// runs on the monitor's fresh state like any publish. /discover lists the live
// nodes, each keeping its id across restarts; /admin/snapshot names the store.
import { describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../cloud/receiver.ts';
import { call, createMonitor, publish } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { type ServerProcess, stablePort } from '../support/server-process.ts';
import { until } from '../support/until.ts';
import { nodesOnOneDatabase } from './nodes.ts';

const unavailable = await postgresFor('the shared cloud tests');

const admin = 'vga_shared-cloud-admin-token-of-the-test';
const secret = 'whsec-of-the-shared-cloud-test';
const flags = ['--allow-admin', admin, '--allow-insecure-webhooks'];

const makeKey = async (node: ServerProcess) => {
  const made = await call(node.url, 'POST', '/v1/api-keys', { token: admin, body: { name: 'shared', monitors: '*' } });
  expect(made.status).toBe(201);
  return made.body.key as string;
};

describe.skipIf(unavailable !== undefined)('the cloud API on several nodes', () => {
  const cluster = nodesOnOneDatabase();

  it('lists the live nodes in discover, each keeping its id across a restart, and names the store in the snapshot', async () => {
    const portB = await stablePort();
    const a = await cluster.startOne(flags);
    let b = await cluster.startOne(flags, portB);
    // Nodes killed before stay listed until their heartbeat is 5 s old (which is why this test comes
    // first, before any is killed): wait for exactly these two.
    const expected = [a.url, b.url].sort().join(' ');
    const both = await until('both nodes listed, and only they', async () => {
      const nodes = (await call(a.base, 'GET', '/discover')).body.nodes as { id: string; url: string }[];
      return nodes.map((n) => n.url).sort().join(' ') === expected ? nodes : undefined;
    });
    const idOfB = (await call(b.base, 'GET', '/discover')).body.node.id as string;
    expect(both.map((n) => n.id)).toContain(idOfB);

    await b.kill();
    await until('the dead node left out', async () => {
      const nodes = (await call(a.base, 'GET', '/discover')).body.nodes as { id: string; url: string }[];
      return nodes.length === 1 && nodes[0]!.url === a.url ? nodes : undefined;
    });
    b = await cluster.startOne(flags, portB);
    expect((await call(b.base, 'GET', '/discover')).body.node.id).toBe(idOfB);

    const snapshot = await call(a.base, 'GET', '/admin/snapshot', { token: admin });
    expect(snapshot.status).toBe(200);
    expect(snapshot.body.store.kind).toBe('postgres');
    expect(snapshot.body.store.url).toMatch(/^postgres(ql)?:\/\//);
    expect(snapshot.body.store.path).toBeUndefined();
  });

  it('serves a key made on one node on the other, and on both after they restart', async () => {
    const [portA, portB] = [await stablePort(), await stablePort()];
    let a = await cluster.startOne(flags, portA);
    let b = await cluster.startOne(flags, portB);
    const key = await makeKey(a);
    const webhook = await call(b.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'cir.capture', url: 'http://127.0.0.1:9/hook', secret } });
    expect(webhook.status).toBe(201);
    expect((await call(a.url, 'GET', '/v1/webhooks', { token: key })).body.map((w: { id: string }) => w.id)).toEqual([webhook.body.id]);

    await Promise.all([a.stop(), b.stop()]);
    [a, b] = [await cluster.startOne(flags, portA), await cluster.startOne(flags, portB)];
    for (const node of [a, b]) {
      const listed = await call(node.url, 'GET', '/v1/webhooks', { token: key });
      expect(listed.status).toBe(200);
      expect(listed.body.map((w: { id: string }) => w.id)).toEqual([webhook.body.id]);
    }
    // A key revoked on one node is refused on the other.
    const keys = await call(b.url, 'GET', '/v1/api-keys', { token: admin });
    expect((await call(b.url, 'DELETE', `/v1/api-keys/${keys.body.keys[0].id}`, { token: admin })).status).toBe(200);
    expect((await call(a.url, 'GET', '/v1/webhooks', { token: key })).status).toBe(401);
  });

  // Two nodes for three tests: the first two neither kill nor configure one, the last kills one at its
  // end. The nodes hold at most 64 KiB of events waiting for delivery per key (the second test's
  // subject); the others queue a few small events each, under keys of their own.
  describe('on two nodes', () => {
    const nodes = cluster.shared(2, [...flags, '--max-queued-event-bytes', '65536']);

    it('answers a trigger through one node after writes through the other', async () => {
      const [a, b] = nodes();
      const key = await makeKey(a!);
      const monitor = await createMonitor(a!.base, {});
      const first = await call(a!.url, 'POST', `/v1/triggers/${monitor.id}`, { token: key, body: { vars: { N: '0' } } });
      expect(first.status).toBe(201);
      let last = first.body.seq as number;
      for (let i = 1; i <= 5; i++) {
        expect((await publish(b!.base, monitor.id, monitor.ownerToken, { type: 'test.item', subject: `s${i}` })).status).toBe(201);
        const fired = await call(a!.url, 'POST', `/v1/triggers/${monitor.id}`, { token: key, body: { vars: { N: String(i) } } });
        expect(fired.status, JSON.stringify(fired.body)).toBe(201);
        // After the publish through B, the seq that B's write took.
        expect(fired.body.seq).toBe(last + 2);
        last = fired.body.seq;
      }
    });

    /** A receiver, and a key made on node A with a webhook of cir.capture events to it; the receiver is closed after `test`. */
    const withWebhook = async (test: (setting: { a: ServerProcess; b: ServerProcess; key: string; webhook: string; receiver: Receiver }) => Promise<void>) => {
      const receiver = await startReceiver(secret);
      try {
        const [a, b] = nodes();
        const key = await makeKey(a!);
        const webhook = await call(a!.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'cir.capture', url: receiver.url, secret } });
        expect(webhook.status).toBe(201);
        await test({ a: a!, b: b!, key, webhook: webhook.body.id, receiver });
      } finally {
        await receiver.close();
      }
    };

    it('counts the bytes a key has waiting for delivery across the nodes', async () => {
      await withWebhook(async ({ a, b, key, webhook, receiver }) => {
        const event = { type: 'cir.capture', data: { blob: 'x'.repeat(40_000) } };
        // The first attempt fails: 40 KB wait for the retry, queued through A.
        receiver.answers.push(503);
        expect((await call(a.url, 'POST', '/v1/events', { token: key, body: event })).status).toBe(202);
        await receiver.waitFor(1);
        // Through B another 40 KB would pass the 64 KiB cap.
        const over = await call(b.url, 'POST', '/v1/events', { token: key, body: event });
        expect(over.status, JSON.stringify(over.body)).toBe(429);
        expect(over.body).toMatchObject({ code: 'OVER_BUDGET', queued_bytes: expect.any(Number) });
        expect(over.body.queued_bytes).toBeGreaterThan(40_000);
        // Once the retry is delivered (by either node), either node takes the next event.
        await until('the retry delivered', async () => {
          const listed = await call(b.url, 'GET', `/v1/webhooks/${webhook}/deliveries`, { token: key });
          return listed.body.deliveries[0]?.status === 'delivered' ? listed : undefined;
        });
        for (const node of [a, b]) {
          const sent = await call(node.url, 'POST', '/v1/events', { token: key, body: event });
          expect(sent.status, JSON.stringify(sent.body)).toBe(202);
          await until('the event delivered', async () => {
            const listed = await call(b.url, 'GET', `/v1/webhooks/${webhook}/deliveries`, { token: key });
            return listed.body.deliveries.every((d: { status: string }) => d.status === 'delivered') ? listed : undefined;
          });
        }
      });
    });

    it('delivers a delivery queued on a node that dies once, from another node', async () => {
      await withWebhook(async ({ a, b, key, webhook, receiver }) => {
        // With both nodes up, events sent through either are each delivered once.
        for (const node of [a, b, a, b]) {
          expect((await call(node.url, 'POST', '/v1/events', { token: key, body: { type: 'cir.capture', data: {} } })).status).toBe(202);
        }
        await receiver.waitFor(4);
        // The first attempt of the next one fails; the node that queued it dies before the retry.
        receiver.answers.push(500);
        expect((await call(a.url, 'POST', '/v1/events', { token: key, body: { type: 'cir.capture', data: { last: true } } })).status).toBe(202);
        await receiver.waitFor(5);
        // A recorded the failed attempt and its retry (an attempt A never finished is taken over once its 60 s claim ends).
        await until('the failed attempt recorded', async () => {
          const listed = await call(b.url, 'GET', `/v1/webhooks/${webhook}/deliveries`, { token: key });
          return listed.body.deliveries.some((d: { status: string; attempts: number }) => d.status === 'pending' && d.attempts === 1) ? listed : undefined;
        });
        await a.kill();
        await until('the retry from the surviving node', async () => {
          const listed = await call(b.url, 'GET', `/v1/webhooks/${webhook}/deliveries`, { token: key });
          return listed.body.deliveries.every((d: { status: string }) => d.status === 'delivered') ? listed : undefined;
        });
        const ids = receiver.received.map((r) => r.headers['webhook-id']);
        expect(ids).toHaveLength(6);
        // Four delivered at once, the last one twice: its failed attempt and its retry.
        expect(new Set(ids).size).toBe(5);
        expect(receiver.received.at(-1)!.body.data).toEqual({ last: true });
      });
    });
  });
});
