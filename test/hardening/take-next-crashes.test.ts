// Take-next on one SQLite server through crashes (protocol.md §21): slots
// that take the next subject, complete and take the next, release, or die
// and let their lease lapse, while producers publish and the server itself is
// killed (kill -9) and restarted on its state file. Checked from the slots'
// own records and the lease history: no subject held by two slots at once, no
// NO_WORK while a subject was certainly free, and every subject done.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, replayAll, subscribe } from '../support/client.ts';
import { type ServerProcess, stablePort, startServerProcess, tempDir } from '../support/server-process.ts';
import type { LeaseRecord } from '../cluster/workload/lease-clients.ts';
import { checkLeases, leaseHistory } from '../cluster/workload/lease-invariants.ts';
import { idleWhileWorkWaited, type NoWork, runTakeClients } from '../cluster/workload/take-clients.ts';

async function produce(base: () => string, monitor: string, token: string, count: number, published: Map<string, number>, prefix: string): Promise<void> {
  for (let i = 0; i < count; i += 10) {
    const observations = Array.from({ length: Math.min(10, count - i) }, (_, j) => ({ type: 'test.job', subject: `${prefix}-${i + j}` }));
    for (;;) {
      const reply = await call(base(), 'POST', `/monitors/${monitor}/observations`, { token, body: { observations } }).catch(() => undefined);
      if (reply?.status === 201) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const o of observations) published.set(o.subject, Date.now());
    await new Promise((r) => setTimeout(r, 30));
  }
}

describe('take-next through crashes on one SQLite server', () => {
  it('never grants a subject to two slots, never idles while work waits, and gets every subject done', { timeout: 180_000 }, async () => {
    const state = join(tempDir('vigil-take-next-crash-'), 'state.db');
    const port = await stablePort();
    let server: ServerProcess = await startServerProcess({ state, port });
    try {
      const base = () => server.base;
      const queue = await createMonitor(base(), { capabilities: ['observe', 'act'], types: ['test.job'] });
      const clients = await Promise.all(Array.from({ length: 8 }, (_, i) => subscribe(base(), { monitor: queue.id, subscriber: `agent:slot-${i}`, capabilities: ['act'] }, queue.ownerToken)));
      const records: LeaseRecord[] = [];
      const noWork: NoWork[] = [];
      const published = new Map<string, number>();
      let running = true;
      const slots = runTakeClients({ clients, bases: () => [server.base], running: () => running, records, noWork });
      try {
        await produce(base, queue.id, queue.ownerToken, 150, published, 'a');
        await server.kill();
        server = await startServerProcess({ state, port });
        await produce(base, queue.id, queue.ownerToken, 150, published, 'b');
        while (records.filter((r) => r.op === 'complete' && r.status === 200).length < 200) await new Promise((r) => setTimeout(r, 100));
      } finally {
        running = false;
        await slots;
      }
      const finisher = await subscribe(base(), { monitor: queue.id, subscriber: 'agent:finisher', capabilities: ['act'] }, queue.ownerToken);
      for (;;) {
        const taken = await call(base(), 'POST', `/subscriptions/${finisher.id}/leases/claim`, { token: finisher.token, body: { next: true, count: 100, wait: 4 } });
        if (taken.status === 404) break;
        expect(taken.status).toBe(201);
        const items = taken.body.leases.map((l: any) => ({ subject: l.subject, fence: l.fence }));
        expect((await call(base(), 'POST', `/subscriptions/${finisher.id}/leases/complete`, { token: finisher.token, body: { items } })).status).toBe(200);
      }
      const reader = await subscribe(base(), { monitor: queue.id, subscriber: 'agent:auditor' }, queue.ownerToken);
      const history = leaseHistory(await replayAll(base(), reader));
      const verdict = checkLeases(records, history);
      expect(verdict.violations).toEqual([]);
      expect(verdict.grants).toBeGreaterThan(200);
      expect(idleWhileWorkWaited(noWork, published, history)).toEqual([]);
      const done = new Set(history.filter((h) => h.action === 'complete').map((h) => h.subject));
      expect([...published.keys()].filter((s) => !done.has(s))).toEqual([]);
    } finally {
      await server.kill();
    }
  });
});
