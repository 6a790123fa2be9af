// kill -9 under a mixed load (§12, issue 4 point 4): 24 clients publish,
// pull, ack, claim, complete and release, the server is killed with SIGKILL
// while they are at it (once it has acknowledged twice as many publishes as
// there are clients, and some completes), restarted on the same file, and
// every write that was answered 2xx must be there; the lease observations
// must never show two holders of one subject at once.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { stablePort, startServerProcess, tempDir, transports } from '../support/server-process.ts';
import { leaseType, readAll, sleep } from './support.ts';
import { scaled } from '../support/time-scale.ts';
import { until } from '../support/until.ts';

interface Sub {
  readonly id: string;
  readonly token: string;
}

const clients = 24;

describe.each(transports)('kill -9 under load over %s', (transport) => {
  it(`${clients} clients: no acknowledged write lost, never two holders`, async () => {
    const state = join(tempDir(), 'state.db');
    const port = await stablePort();
    let server = await startServerProcess({ transport, state, port });
    const m = await createMonitor(server.base, { id: 'load', capabilities: ['observe', 'act'] });
    const subs: Sub[] = await Promise.all(
      Array.from({ length: clients }, (_, i) =>
        subscribe(server.base, { monitor: m.id, subscriber: `agent:client-${i}`, capabilities: ['observe', 'act'] }, m.ownerToken),
      ),
    );

    // What the server acknowledged, as the clients saw it.
    const published = new Map<number, { client: number; n: number }>();
    const acked = new Map<string, number>();
    const completed: Array<{ sub: Sub; subject: string }> = [];
    const subjects: string[] = [];
    let stop = false;
    let cut = 0;

    const client = async (i: number) => {
      const sub = subs[i]!;
      for (let n = 0; !stop; n++) {
        try {
          const subject = `job-${i}-${n}`;
          const pub = await publish(server.base, m.id, m.ownerToken, { type: 'app.job', subject, data: { client: i, n } });
          if (pub.status === 201) {
            published.set(pub.body.seq, { client: i, n });
            subjects.push(subject);
          }
          const page = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?limit=20`, { token: sub.token });
          if (page.status === 200) {
            const ack = await call(server.base, 'POST', `/subscriptions/${sub.id}/ack`, { token: sub.token, body: { cursor: page.body.next } });
            if (ack.status === 200) acked.set(sub.id, Math.max(acked.get(sub.id) ?? 0, page.body.next));
          }
          const target = subjects[Math.floor(Math.random() * subjects.length)];
          if (target === undefined) continue;
          const claimed = await call(server.base, 'POST', `/subscriptions/${sub.id}/leases/claim`, {
            token: sub.token,
            body: { subject: target, lease_duration_seconds: 600 },
          });
          if (claimed.status !== 201 && claimed.status !== 200) continue;
          const action = n % 3 === 2 ? 'release' : 'complete';
          const done = await call(server.base, 'POST', `/subscriptions/${sub.id}/leases/${action}`, {
            token: sub.token,
            body: action === 'complete' ? { subject: target, outcome: 'done' } : { subject: target },
          });
          if (action === 'complete' && done.status === 200) completed.push({ sub, subject: target });
        } catch {
          cut++; // the kill cuts requests in flight: those were never acknowledged
          if (!stop) await sleep(10);
        }
      }
    };

    const running = Array.from({ length: clients }, (_, i) => client(i));
    // Killed on what the server has acknowledged, not after a fixed time: 2.5 s of load gave 84-119
    // publishes on a loaded two-core machine (and on a busier one too few), and what is asserted below
    // holds for any amount, as long as writes are in flight at the kill.
    await until(
      () => `${2 * clients} acknowledged publishes and ${clients / 4} completes (${published.size} and ${completed.length} so far)`,
      () => (published.size >= 2 * clients && completed.length >= clients / 4 ? true : undefined),
      scaled(30_000),
    );
    await server.kill();
    stop = true;
    await Promise.all(running);
    expect(cut, 'requests in flight when the server was killed').toBeGreaterThan(0);
    expect(published.size).toBeGreaterThan(clients);
    expect(completed.length).toBeGreaterThan(0);

    server = await startServerProcess({ transport, state, port });
    try {
      // Every 201 publish is readable at its seq with its data.
      const reader = await subscribe(server.base, { monitor: m.id, subscriber: 'agent:auditor' }, m.ownerToken);
      const feed = await readAll(server.base, reader);
      const bySeq = new Map(feed.map((o) => [Number(o.id), o]));
      for (const [seq, data] of published) {
        const o = bySeq.get(seq);
        expect(o, `published seq ${seq}`).toBeDefined();
        expect(o.data).toMatchObject(data);
      }
      // Seqs have no gaps.
      const seqs = feed.map((o) => Number(o.id));
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, k) => k + 1));

      // Acknowledged cursors are not below what was acknowledged.
      for (const sub of subs) {
        const page = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?limit=1`, { token: sub.token });
        expect(page.status).toBe(200);
        expect(page.body.cursor, sub.id).toBeGreaterThanOrEqual(acked.get(sub.id) ?? 0);
      }

      // Completed leases are completed: each acknowledged complete is stored, and where nothing
      // claimed the subject again, the lease is still completed (repeating the complete answers 200).
      const leaseEvents = feed.filter((o) => o.type === leaseType);
      const lastBySubject = new Map(leaseEvents.map((o) => [o.subject as string, o]));
      for (const { sub, subject } of completed) {
        const stored = leaseEvents.some(
          (o) => o.subject === subject && o.data.payload.action === 'complete' && o.data.payload.holder === `sub:${sub.id}`,
        );
        expect(stored, `complete of ${subject} by ${sub.id}`).toBe(true);
        const last = lastBySubject.get(subject)!;
        if (last.data.payload.action !== 'complete' || last.data.payload.holder !== `sub:${sub.id}`) continue;
        const again = await call(server.base, 'POST', `/subscriptions/${sub.id}/leases/complete`, {
          token: sub.token,
          body: { subject, outcome: 'done' },
        });
        expect(again.status, subject).toBe(200);
        expect(again.body.lease.state).toBe('completed');
      }

      // Never two holders: between a claim and the next complete/release/reject/expired no other holder claims.
      const holders = new Map<string, string | null>();
      let claims = 0;
      for (const o of feed) {
        if (o.type !== leaseType) continue;
        const { action, holder } = o.data.payload;
        const current = holders.get(o.subject) ?? null;
        if (action === 'claim') {
          claims++;
          expect(current === null || current === holder, `seq ${o.id}: ${holder} claimed ${o.subject} held by ${current}`).toBe(true);
          holders.set(o.subject, holder);
        } else if (['complete', 'release', 'reject', 'expired'].includes(action)) {
          expect(current, `seq ${o.id}: ${action} of ${o.subject} by ${holder}`).toBe(holder);
          holders.set(o.subject, null);
        }
      }
      expect(claims).toBeGreaterThan(0);

      // Leases held at the kill are still held by the same holder after the restart: a claim by anyone else is refused.
      const held = [...holders].filter(([, holder]) => holder !== null).slice(0, 10);
      for (const [subject, holder] of held) {
        const other = subs.find((s) => `sub:${s.id}` !== holder)!;
        const reply = await call(server.base, 'POST', `/subscriptions/${other.id}/leases/claim`, { token: other.token, body: { subject } });
        expect(reply.status, subject).toBe(409);
        expect(reply.body).toMatchObject({ code: 'LEASE_HELD', holder });
      }
    } finally {
      await server.stop();
    }
  }, scaled(60_000));
});
