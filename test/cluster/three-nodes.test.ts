// Three real `vigil serve` nodes on one PostgreSQL database behave as one
// server (protocol.md §20): seq without gaps across nodes, one lease holder,
// cross-node wakes, timers taken over from a killed node, and no acknowledged
// write lost when a node is killed under load. Waits are on what the clients
// see (acknowledged writes, stored markers, who polled), not on the clock.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, replayAll, subscribe } from '../support/client.ts';
import { openSse } from '../support/sse.ts';
import { postgresFor } from '../support/postgres.ts';
import { nodesOnOneDatabase, untilNodesSeeEachOther } from './nodes.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';
import { until } from '../support/until.ts';

const unavailable = await postgresFor('the cluster tests');

/** The pid of the process whose TCP connection has local port `port` (ss, from iproute2). */
function processOnPort(port: number): number | undefined {
  const line = execFileSync('ss', ['-tnpH', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(line)?.[1];
  return pid === undefined ? undefined : Number(pid);
}

describe.skipIf(unavailable !== undefined)('three nodes on one PostgreSQL database', () => {
  const cluster = nodesOnOneDatabase();

  // All the tests share three nodes, each test on a monitor of its own. The first ones neither kill
  // nor configure a node.
  const nodes = cluster.shared(3);

  describe('on three nodes that run throughout', () => {

    it('names each node in discover', async () => {
      const [a, b] = nodes();
      const ids = await Promise.all([a!, b!].map(async (n) => (await call(n.base, 'GET', '/discover')).body.node));
      expect(ids[0].store).toBe('postgres');
      expect(ids[0].id).not.toBe(ids[1].id);
    });

    it('numbers concurrent publishes spread over the nodes without gaps or duplicates', async () => {
      const all = nodes();
      const monitor = await createMonitor(all[0]!.base, {});
      const replies = await Promise.all(
        Array.from({ length: 150 }, (_, i) => publish(all[i % 3]!.base, monitor.id, monitor.ownerToken, { type: 'test.item', subject: `s${i}` })),
      );
      expect(replies.filter((r) => r.status !== 201).map((r) => r.body)).toEqual([]);
      const seqs = replies.map((r) => r.body.seq as number).sort((x, y) => x - y);
      expect(new Set(seqs).size).toBe(150);
      const sub = await subscribe(all[2]!.base, { monitor: monitor.id, subscriber: 'agent:reader' }, monitor.ownerToken);
      for (const node of all) {
        const read = await replayAll(node.base, sub);
        expect(read.map((o) => Number(o.id))).toEqual(Array.from({ length: read.length }, (_, i) => i + 1));
        expect(read.filter((o) => o.type === 'test.item')).toHaveLength(150);
      }
    });

    it('gives one lease to exactly one of 50 claims spread over the nodes', async () => {
      const all = nodes();
      const monitor = await createMonitor(all[0]!.base, { capabilities: ['observe', 'act'] });
      await publish(all[1]!.base, monitor.id, monitor.ownerToken, { type: 'test.task', subject: 'job-1' });
      const subs = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          subscribe(all[i % 3]!.base, { monitor: monitor.id, subscriber: `agent:w${i}`, capabilities: ['observe', 'act'] }, monitor.ownerToken),
        ),
      );
      const claims = await Promise.all(
        subs.map((s, i) => call(all[i % 3]!.base, 'POST', `/subscriptions/${s.id}/leases/claim`, { body: { subject: 'job-1' }, token: s.token })),
      );
      const statuses = claims.map((c) => c.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(49);
      const winner = claims.find((c) => c.status === 201)!.body.lease.holder;
      for (const c of claims.filter((r) => r.status === 409)) expect(c.body.holder).toBe(winner);
    });

    it('answers a long-poll on node B with what node A publishes', async () => {
      // Whether the pull is already waiting on B when A's commit arrives or comes after it, the answer
      // is the same. The next test shows node B hearing of A's commits on a stream known to be open;
      // test/http/subscriptions-pull.test.ts shows a waiting pull woken, on a manual clock.
      const [a, b] = nodes();
      const monitor = await createMonitor(a!.base, {});
      const sub = await subscribe(b!.base, { monitor: monitor.id, subscriber: 'agent:waiter', from: 'head' }, monitor.ownerToken);
      const waiting = call(b!.base, 'GET', `/subscriptions/${sub.id}/pull?wait=20`, { token: sub.token });
      const published = await publish(a!.base, monitor.id, monitor.ownerToken, { type: 'test.wake', subject: 'x' });
      const page = await waiting;
      expect(page.status).toBe(200);
      expect(page.body.observations.map((o: { id: string }) => Number(o.id))).toContain(published.body.seq);
    });

    it('ends a stream on node B when its subscription is retired through node A', async () => {
      const [a, b] = nodes();
      const monitor = await createMonitor(a!.base, {});
      const sub = await subscribe(a!.base, { monitor: monitor.id, subscriber: 'agent:streamer', from: 'head' }, monitor.ownerToken);
      const stream = await openSse(`${b!.base}/subscriptions/${sub.id}/stream`, { authorization: `Bearer ${sub.token}` });
      const sent = await publish(a!.base, monitor.id, monitor.ownerToken, { type: 'test.before' });
      const [first] = await stream.waitFor(1, 'observation', 10_000);
      expect(first!.id).toBe(String(sent.body.seq));
      expect((await call(a!.base, 'POST', `/subscriptions/${sub.id}/retire`, { token: sub.token, body: {} })).status).toBe(200);
      await publish(a!.base, monitor.id, monitor.ownerToken, { type: 'test.after' });
      const [error] = await stream.waitFor(1, 'error', 10_000);
      expect(JSON.parse(error!.data).code).toBe('UNAVAILABLE');
      await stream.closed;
      expect(stream.events.filter((e) => e.event === 'observation').map((e) => JSON.parse(e.data).type)).not.toContain('test.after');
    });

    it('shows on the dashboard of a node that never served the monitor, live', async () => {
      const [a, b, c] = nodes();
      const monitor = await createMonitor(a!.base, { id: 'dash-seen', visibility: 'public' });
      await publish(b!.base, monitor.id, monitor.ownerToken, { type: 'test.item', subject: 'first' });
      const controller = new AbortController();
      const response = await fetch(`${c!.url}/ui/events`, { signal: controller.signal });
      const reader = response.body!.getReader();
      let text = '';
      const headOnDashboard = async (head: number) => {
        for (;;) {
          const views = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
          if (views.some((v) => v.monitors.some((m: { id: string; head: number }) => m.id === monitor.id && m.head === head))) return;
          const { value, done } = await reader.read();
          if (done) throw new Error(`the dashboard stream ended:\n${text}`);
          text += new TextDecoder().decode(value);
        }
      };
      try {
        await headOnDashboard(2);
        await publish(a!.base, monitor.id, monitor.ownerToken, { type: 'test.item', subject: 'second' });
        await headOnDashboard(3);
      } finally {
        controller.abort();
      }
    });

    it('creates a monitor id once when nodes race for it', async () => {
      const all = nodes();
      const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => call(all[i % 3]!.base, 'POST', '/monitors', { body: { id: 'raced', visibility: 'public' } })));
      expect(replies.map((r) => r.status).sort()).toEqual([201, ...Array(11).fill(409)]);
      const winner = replies.find((r) => r.status === 201)!.body.owner_token;
      for (const node of all) {
        const listed = await call(node.base, 'GET', '/monitors');
        expect(listed.body.monitors.filter((m: { id: string }) => m.id === 'raced')).toHaveLength(1);
        expect((await publish(node.base, 'raced', winner, { type: 'test.item' })).status).toBe(201);
      }
    });

    it('retires a mute subscription once, whichever node it was made on', async () => {
      const all = nodes();
      // The monitor's own default (what --retire-after-mute sets for a whole node): the subscriptions take it whichever node they are made on.
      const monitor = await createMonitor(all[0]!.base, { retire_after_mute_seconds: 2 });
      const subs = await Promise.all(all.map((n, i) => subscribe(n.base, { monitor: monitor.id, subscriber: `agent:quiet${i}` }, monitor.ownerToken)));
      const reader = await subscribe(all[1]!.base, { monitor: monitor.id, subscriber: 'agent:reader', retire_after_mute_seconds: 600 }, monitor.ownerToken);
      let retired: any[] = [];
      for (let i = 0; i < 60 && retired.length < 3; i++) {
        await new Promise((r) => setTimeout(r, 200));
        retired = (await replayAll(all[2]!.base, reader)).filter((o) => o.type === 'ai.vigil.monitor.subscription_retired');
      }
      // A marker written after the three were seen: a second retirement of one of them, from another node's timer, is stored before it.
      const marker = await publish(all[1]!.base, monitor.id, monitor.ownerToken, { type: 'test.marker' });
      retired = (await replayAll(all[0]!.base, reader)).filter((o) => o.type === 'ai.vigil.monitor.subscription_retired' && Number(o.id) < marker.body.seq);
      expect(retired.map((o) => o.data.payload.subscription).sort()).toEqual(subs.map((s) => s.id).sort());
      expect(retired.every((o) => o.data.payload.reason === 'mute')).toBe(true);
    });
  });

  // The three tests below kill nodes: each takes the live ones, and a fresh node for each one killed
  // before it (seven node starts fewer than three nodes of their own each). A killed node stays
  // listed as live for a few seconds; until then a new monitor may be assigned to it, which is why
  // the source test first waits until the nodes see exactly each other.
  describe('on nodes that the tests kill', () => {

    it('expires a lease claimed through node A after A is killed with SIGKILL', async () => {
      const [a, b, c] = await cluster.liveShared(3);
      const monitor = await createMonitor(a!.base, { capabilities: ['observe', 'act'] });
      await publish(a!.base, monitor.id, monitor.ownerToken, { type: 'test.task', subject: 'job-2' });
      const sub = await subscribe(a!.base, { monitor: monitor.id, subscriber: 'agent:holder', capabilities: ['observe', 'act'] }, monitor.ownerToken);
      const claim = await call(a!.base, 'POST', `/subscriptions/${sub.id}/leases/claim`, { body: { subject: 'job-2', lease_duration_seconds: 3 }, token: sub.token });
      expect(claim.status).toBe(201);
      const expires = Date.parse(claim.body.expires);
      await a!.kill();
      const reader = await subscribe(b!.base, { monitor: monitor.id, subscriber: 'agent:reader' }, monitor.ownerToken);
      let expired: any;
      for (let i = 0; i < 100 && !expired; i++) {
        const read = await replayAll(c!.base, reader);
        expired = read.find((o) => o.type === 'ai.vigil.monitor.lease' && o.data.payload.action === 'expired');
        if (!expired) await new Promise((r) => setTimeout(r, 200));
      }
      expect(expired, 'a surviving node recorded the expiry').toBeDefined();
      // A marker written after the expiry was seen: any second expiry, from a second timer at the same deadline, is stored before it.
      const marker = await publish(c!.base, monitor.id, monitor.ownerToken, { type: 'test.marker' });
      const upToMarker = (await replayAll(b!.base, reader)).filter((o) => Number(o.id) < marker.body.seq);
      const expiries = upToMarker.filter((o) => o.type === 'ai.vigil.monitor.lease' && o.data.payload.action === 'expired');
      expect(expiries, 'one node ran the timer').toHaveLength(1);
      expect(expired.data.payload.holder).toBe(`sub:${sub.id}`);
      // Recorded at the expiry, not at some later request: the survivors' timer fired.
      expect(Date.parse(expired.time)).toBeGreaterThanOrEqual(expires);
      const again = await call(b!.base, 'POST', `/subscriptions/${reader.id}/leases/claim`, { body: { subject: 'job-2' }, token: reader.token });
      expect(again.status).toBe(403); // the reader holds no act capability: the lease itself is free
    });

    it('keeps every acknowledged write when one node is killed under mixed load', async () => {
      const all = await cluster.liveShared(3);
      const monitor = await createMonitor(all[0]!.base, { capabilities: ['observe', 'act'] });
      const acknowledged: number[] = [];
      let stop = false;
      const writer = async (node: ServerProcess, k: number) => {
        for (let i = 0; !stop; i++) {
          try {
            const reply = await publish(node.base, monitor.id, monitor.ownerToken, { type: 'test.load', subject: `w${k}-${i}` });
            if (reply.status === 201) acknowledged.push(reply.body.seq);
          } catch {
            // The killed node's connections fail: those writes were never acknowledged.
          }
        }
      };
      const reader = async (node: ServerProcess) => {
        const sub = await subscribe(node.base, { monitor: monitor.id, subscriber: `agent:r${node.port}` }, monitor.ownerToken);
        while (!stop) await call(node.base, 'GET', `/subscriptions/${sub.id}/pull?limit=100`, { token: sub.token }).catch(() => {});
      };
      // Lease workers: each claims and releases its own subject; an acknowledged release's seq must be stored.
      await publish(all[0]!.base, monitor.id, monitor.ownerToken, { observations: all.map((_, k) => ({ type: 'test.task', subject: `job-${k}` })) });
      const leaseWorker = async (node: ServerProcess, k: number) => {
        const sub = await subscribe(node.base, { monitor: monitor.id, subscriber: `agent:l${k}`, capabilities: ['observe', 'act'] }, monitor.ownerToken);
        const path = `/subscriptions/${sub.id}/leases`;
        while (!stop) {
          try {
            await call(node.base, 'POST', `${path}/claim`, { body: { subject: `job-${k}` }, token: sub.token });
            const released = await call(node.base, 'POST', `${path}/release`, { body: { subject: `job-${k}` }, token: sub.token });
            if (released.status === 200) acknowledged.push(released.body.seq);
          } catch {
            // As for publishes: only acknowledged writes count.
          }
        }
      };
      const load = [...all.flatMap((n, k) => [writer(n, k * 2), writer(n, k * 2 + 1), leaseWorker(n, k)]), ...all.map(reader)];
      // A node is killed once the load is going (writes acknowledged), and the load goes on until the survivors have acknowledged more.
      await until('50 acknowledged writes', () => (acknowledged.length >= 50 ? true : undefined), scaled(60_000));
      await all[0]!.kill();
      const atKill = acknowledged.length;
      await until('50 more acknowledged writes after the kill', () => (acknowledged.length >= atKill + 50 ? true : undefined), scaled(60_000));
      stop = true;
      await Promise.allSettled(load);
      expect(acknowledged.length).toBeGreaterThan(0);
      const sub = await subscribe(all[1]!.base, { monitor: monitor.id, subscriber: 'agent:audit' }, monitor.ownerToken);
      const stored = await replayAll(all[2]!.base, sub);
      const seqs = stored.map((o) => Number(o.id));
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
      const present = new Set(seqs);
      expect(acknowledged.filter((s) => !present.has(s))).toEqual([]);
    });

    it('polls a live source from one node only, and from a survivor once that node is killed', async () => {
      // Which process made each poll, from the target's own side of the connection.
      const pollers: (number | undefined)[] = [];
      const target = createServer((req, res) => {
        pollers.push(processOnPort(req.socket.remotePort!));
        res.end('ok');
      });
      await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
      try {
        const all = await cluster.liveShared(3);
        // Until then a new monitor may move between nodes as their heartbeats arrive, and the count below would time that.
        await untilNodesSeeEachOther(all);
        const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/health`;
        const monitor = await createMonitor(all[0]!.base, { source: { kind: 'http', url, interval_s: 1 } });
        const reader = await subscribe(all[1]!.base, { monitor: monitor.id, subscriber: 'agent:reader' }, monitor.ownerToken);
        await until('five polls', async () => (pollers.length >= 5 ? true : undefined));
        // One poller, not three.
        const nodePids = all.map((n) => n.child.pid);
        expect(new Set(pollers.slice(0, 5)).size, `the processes that polled: ${pollers.join(', ')}`).toBe(1);
        expect(nodePids).toContain(pollers[0]);
        const sourced = (await replayAll(all[2]!.base, reader)).filter((o) => o.type === 'ai.vigil.source.http');
        expect(sourced, 'one first contact, written once').toHaveLength(1);
        // Two of three nodes die, whichever was polling among them: the survivor takes the source over.
        await all[0]!.kill();
        await all[1]!.kill();
        // The survivor takes the monitor once the killed owner's lease ends (4 s), then polls.
        const survivor = all[2]!.child.pid;
        await until(() => `a poll from the survivor (pid ${survivor}); polls came from ${[...new Set(pollers)].join(', ')}`, () => (pollers.includes(survivor) ? true : undefined), scaled(15_000));
      } finally {
        target.close();
      }
    }, scaled(60_000));
  });
});
