// Take-next, complete-and-next and lease batches on the wire (protocol.md
// §21), over both transports: /discover lists them, the reply shapes, NO_WORK
// recording nothing, a JSON-RPC batch of a pool's calls answered call by call
// (each all or nothing on its own), and in-process the count of commits such a
// batch makes: one.
import { describe, expect, it } from 'vitest';
import { MonitorService } from '../../src/service/service.ts';
import { Store } from '../../src/store/store.ts';
import { createRpcDoor } from '../../src/transport/rpc-door.ts';
import { invoke } from '../../src/service/operations.ts';
import { call, createMonitor, subscribe } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { headOf, useServer } from './fixtures.ts';

interface Sub {
  readonly id: string;
  readonly token: string;
}

describe.each(transports)('take-next over %s', (transport) => {
  const server = useServer({ transport });
  const lease = (sub: Sub, action: string, body: Record<string, unknown>) => call(server.base, 'POST', `/subscriptions/${sub.id}/leases/${action}`, { token: sub.token, body });
  const rpc = (payload: unknown, token: string) => call(server.base, 'POST', '/rpc', { body: payload, token });

  async function pool(jobs: number) {
    const m = await createMonitor(server.base, { capabilities: ['observe', 'act'] });
    const observations = Array.from({ length: jobs }, (_, i) => ({ type: 'app.job', subject: `job-${i}` }));
    expect((await call(server.base, 'POST', `/monitors/${m.id}/observations`, { token: m.ownerToken, body: { observations } })).status).toBe(201);
    const worker = await subscribe(server.base, { monitor: m.id, subscriber: 'worker-pool', capabilities: ['act'] }, m.ownerToken);
    return { ...m, worker };
  }

  it('/discover lists leases.next and leases.batch beside leases.fence', async () => {
    const reply = await call(server.base, 'GET', '/discover');
    expect(reply.body.extensions).toEqual(expect.arrayContaining(['leases.fence', 'leases.next', 'leases.batch']));
  });

  it('takes, completes and takes the next, then answers 404 NO_WORK and records nothing', async () => {
    const { id, ownerToken, worker } = await pool(2);
    const first = await lease(worker, 'claim', { next: true, lease_duration_seconds: 60 });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ lease: { subject: 'job-0', state: 'held' }, fence: first.body.lease.fence, expires: first.body.lease.expires });
    const done = await lease(worker, 'complete', { subject: 'job-0', fence: first.body.fence, outcome: 'ok', next: true });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ ok: true, lease: { subject: 'job-0', state: 'completed' }, next: { subject: 'job-1', state: 'held' } });
    const head = await headOf(server.base, id, ownerToken);
    const none = await lease(worker, 'claim', { next: true });
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('NO_WORK');
    expect(none.body.rejected_seq).toBeUndefined();
    expect(await headOf(server.base, id, ownerToken)).toBe(head);
    const viaRpc = await rpc({ jsonrpc: '2.0', id: 1, method: 'leases/claim', params: { subscription: worker.id, next: true } }, worker.token);
    expect(viaRpc.body.error).toMatchObject({ code: -32020, data: { code: 'NO_WORK' } });
  });

  it('answers a JSON-RPC batch of a pool’s calls call by call, each all or nothing', async () => {
    const { worker } = await pool(60);
    const batch = (calls: Array<[string, Record<string, unknown>]>) =>
      rpc(
        calls.map(([method, params], i) => ({ jsonrpc: '2.0', id: i, method, params: { subscription: worker.id, ...params } })),
        worker.token,
      );
    const taken = await batch(Array.from({ length: 50 }, () => ['leases/claim', { next: true }]));
    expect(taken.status).toBe(200);
    const leases = taken.body.map((r: any) => r.result);
    expect(new Set(leases.map((l: any) => l.lease.subject)).size).toBe(50);
    // The pool's next turn: every slot completes and takes the next; one slot names a stale fence.
    const turn = leases.map((l: any, i: number) => ['leases/complete', { subject: l.lease.subject, fence: i === 7 ? l.fence + 1000 : l.fence, next: true }] as [string, Record<string, unknown>]);
    const replies = (await batch(turn)).body;
    expect(replies).toHaveLength(50);
    expect(replies[7].error).toMatchObject({ code: -32011, data: { code: 'LEASE_LOST' } });
    const ok = replies.filter((r: any) => r.result);
    expect(ok).toHaveLength(49);
    const next = ok.map((r: any) => r.result.next).filter(Boolean);
    // 10 subjects were left: ten slots got one, the others null; the refused slot got none and still holds its lease.
    expect(next).toHaveLength(10);
    expect(new Set(next.map((l: any) => l.subject)).size).toBe(10);
    const still = await lease(worker, 'renew', { subject: leases[7].lease.subject, fence: leases[7].fence });
    expect(still.status).toBe(200);
  });
});

describe('a JSON-RPC batch of lease calls', () => {
  it('is one commit, answered after it', async () => {
    const service = new MonitorService({ store: Store.open({ path: ':memory:' }), log: () => {} });
    try {
      const created: any = (await invoke(service, 'monitors/create', { id: 'batch', capabilities: ['observe', 'act'] }, { caller: {} })).body;
      const observations = Array.from({ length: 40 }, (_, i) => ({ type: 'app.job', subject: `job-${i}` }));
      await invoke(service, 'monitors/publish', { id: 'batch', observations }, { caller: { bearer: created.owner_token } });
      const sub: any = (await invoke(service, 'feeds/subscribe', { monitor: 'batch', subscriber: 'pool', capabilities: ['act'] }, { caller: { bearer: created.owner_token } })).body;
      await service.settle();
      let commits = 0;
      service.store.commits.on('committed', () => commits++);
      const door = createRpcDoor(service);
      const body = Buffer.from(JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'leases/claim', params: { subscription: sub.subscription.id, next: true, count: 2 } }))));
      const reply = await door({ method: 'POST', path: '/mp/v0/rpc', query: '', headers: { authorization: `Bearer ${sub.token}` }, remoteAddress: '127.0.0.1', body, signal: new AbortController().signal }, { bearer: sub.token });
      const results = JSON.parse(String(reply.body)).map((r: any) => r.result.leases.length);
      expect(results).toEqual(Array(20).fill(2));
      expect(commits).toBe(1);
    } finally {
      service.close();
    }
  });
});
