// The zombie release of issue 43: subscriber A holds `s0` through node 1;
// node 0 is stopped (SIGSTOP); A sends `release` to node 0, gives up and
// closes its connection, retries the release through node 1 (200) and claims
// `s0` again (201). When node 0 resumes it must not run the abandoned
// release: the newer grant stands (B's claim is refused LEASE_HELD naming
// A), and the lease's history holds only A's claim, the retried release and
// A's second claim. With the fencing token the old release names a grant
// that is no longer current; without it (a base client) the node drops the
// write because its client had gone (over uWS and over node:http, which
// must notice the client's close by itself).
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, replayAll, subscribe } from '../support/client.ts';
import { sendAndGiveUp } from '../support/gave-up.ts';
import { postgresFor } from '../support/postgres.ts';
import { startServerProcess } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';
import { nodesOnOneDatabase, untilNodesSeeEachOther } from './nodes.ts';

const unavailable = await postgresFor('the zombie release test');

describe.skipIf(unavailable !== undefined)('a release whose client gave up on a stopped node', () => {
  const cluster = nodesOnOneDatabase();

  for (const [fenced, transport] of [[false, 'uws'], [true, 'uws'], [false, 'node']] as const) {
    it(`does not end the newer grant when the node resumes (${fenced ? 'with' : 'without'} a fencing token, over ${transport})`, { timeout: scaled(120_000) }, async () => {
      const node = async () => {
        const started = await startServerProcess({ transport, args: ['--store', cluster.database().url, '--store-sessions', '4'] });
        cluster.adopt(started);
        return started;
      };
      const paused = await node();
      const live = await node();
      await untilNodesSeeEachOther([paused!, live!]);
      const m = await createMonitor(live!.base, { capabilities: ['observe', 'act'] });
      await publish(live!.base, m.id, m.ownerToken, { type: 'app.job', subject: 's0' });
      const a = await subscribe(live!.base, { monitor: m.id, subscriber: 'agent:a', capabilities: ['act'] }, m.ownerToken);
      const b = await subscribe(live!.base, { monitor: m.id, subscriber: 'agent:b', capabilities: ['act'] }, m.ownerToken);
      const lease = (node: string, sub: { id: string; token: string }, action: string, body: Record<string, unknown>) =>
        call(node, 'POST', `/subscriptions/${sub.id}/leases/${action}`, { token: sub.token, body });

      const first = await lease(live!.base, a, 'claim', { subject: 's0', lease_duration_seconds: 30 });
      expect(first.status).toBe(201);
      const fence = fenced ? { fence: first.body.fence as number } : {};

      paused!.child.kill('SIGSTOP');
      try {
        const path = new URL(paused!.base).pathname;
        await sendAndGiveUp(paused!.url, 'POST', `${path}/subscriptions/${a.id}/leases/release`, { token: a.token, body: { subject: 's0', reason: 'abandoned', ...fence } });
        const retried = await lease(live!.base, a, 'release', { subject: 's0', reason: 'retried', ...fence });
        expect(retried.status).toBe(200);
        const second = await lease(live!.base, a, 'claim', { subject: 's0', lease_duration_seconds: 30 });
        expect(second.status).toBe(201);
      } finally {
        paused!.child.kill('SIGCONT');
      }

      const byB = await lease(paused!.base, b, 'claim', { subject: 's0' });
      expect(byB.status).toBe(409);
      expect(byB.body.code).toBe('LEASE_HELD');
      expect(byB.body.holder).toBe(`sub:${a.id}`);
      const reader = await subscribe(live!.base, { monitor: m.id, subscriber: 'reader' }, m.ownerToken);
      const history = (await replayAll(live!.base, reader))
        .filter((o) => o.type === 'ai.vigil.monitor.lease' && o.subject === 's0')
        .map((o) => `${o.data.payload.action} ${o.data.payload.holder}${o.data.payload.reason ? ` ${o.data.payload.reason}` : ''}`);
      const holderA = `sub:${a.id}`;
      expect(history).toEqual([`claim ${holderA}`, `release ${holderA} retried`, `claim ${holderA}`]);
    });
  }
});
