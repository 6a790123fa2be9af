// Take-next on three real nodes (protocol.md §20, §21): slots that take the
// next subject through any node, complete and take the next, release, or
// crash and let their lease lapse, while producers publish and a node is
// killed (kill -9) and restarted. The database arbitrates: no subject is ever
// held by two clients, no slot is told NO_WORK while a subject was certainly
// free, and every subject gets done. Complete-and-next is one PostgreSQL
// transaction: with PostgreSQL ending the nodes' sessions under load (a real
// failed commit), a completion is never stored without the grant it took, nor
// a grant without its completion. All checked from the clients' records and
// the monitor's lease history, not from what a node says.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, replayAll, subscribe } from '../support/client.ts';
import { adminUrl, postgresUnavailable } from '../support/postgres.ts';
import { stablePort } from '../support/server-process.ts';
import { untilTrue } from '../support/until.ts';
import { nodesOnOneDatabase } from './nodes.ts';
import type { LeaseRecord } from './workload/lease-clients.ts';
import { checkLeases, leaseHistory } from './workload/lease-invariants.ts';
import { idleWhileWorkWaited, type NoWork, runTakeClients } from './workload/take-clients.ts';

const unavailable = await postgresUnavailable();
if (unavailable) console.warn(`skipping the cluster take-next tests: ${unavailable}`);

async function terminateSessions(database: string): Promise<number> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
    return rows.length;
  } finally {
    await admin.end();
  }
}

let lastRefusal = '';

/** Publishes `count` subjects in small batches through random nodes; returns when each was acknowledged. */
async function produce(bases: () => readonly string[], monitor: string, token: string, count: number, published: Map<string, number>, prefix: string): Promise<void> {
  for (let i = 0; i < count; i += 10) {
    const observations = Array.from({ length: Math.min(10, count - i) }, (_, j) => ({ type: 'test.job', subject: `${prefix}-${i + j}` }));
    for (;;) {
      const list = bases();
      const reply = await call(list[Math.floor(Math.random() * list.length)]!, 'POST', `/monitors/${monitor}/observations`, { token, body: { observations } }).catch(() => undefined);
      if (reply?.status === 201) break;
      lastRefusal = reply ? `${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}` : 'no reply';
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const o of observations) published.set(o.subject, Date.now());
    await new Promise((r) => setTimeout(r, 30));
  }
}

/** Takes and completes whatever is left (lapsed leases included) through one node, until NO_WORK after a wait. */
async function drain(base: string, client: { id: string; token: string }): Promise<void> {
  for (;;) {
    const taken = await call(base, 'POST', `/subscriptions/${client.id}/leases/claim`, { token: client.token, body: { next: true, count: 100, wait: 4 } });
    if (taken.status === 404) return;
    expect(taken.status).toBe(201);
    const items = taken.body.leases.map((l: any) => ({ subject: l.subject, fence: l.fence }));
    expect((await call(base, 'POST', `/subscriptions/${client.id}/leases/complete`, { token: client.token, body: { items } })).status).toBe(200);
  }
}

describe.skipIf(unavailable !== undefined)('take-next on three nodes', () => {
  const cluster = nodesOnOneDatabase();
  // Two nodes serve both tests, each test on a monitor of its own; the last adds a third that it kills and
  // restarts (the nodes it started are killed after it). Two node starts fewer than a set per test.
  const shared = cluster.shared(2);

  it('stores a completion and the grant it took together or not at all, while PostgreSQL ends the sessions', { timeout: 360_000 }, async () => {
    const nodes = shared();
    const bases = nodes.map((n) => n.base);
    const database = cluster.database().name;
    const queue = await createMonitor(bases[0]!, { capabilities: ['observe', 'act'] });
    const published = new Map<string, number>();
    // A backlog that never runs out while the slots complete about 120 (six rounds of 20, below; 150 with
    // the requests in flight when a round ends): 300 is twice that. (It was 1,500, then 500, which only
    // made publishing and the audit's replay longer.)
    await produce(() => bases, queue.id, queue.ownerToken, 300, published, 'job');
    const clients = await Promise.all(Array.from({ length: 6 }, (_, i) => subscribe(bases[i % 2]!, { monitor: queue.id, subscriber: `agent:w${i}`, capabilities: ['act'] }, queue.ownerToken)));
    const records: LeaseRecord[] = [];
    const noWork: NoWork[] = [];
    let running = true;
    const slots = runTakeClients({ clients, bases: () => bases, running: () => running, records, noWork, crash: 0, onlyCompleteNext: true });
    let terminated = 0;
    const completes = () => records.filter((r) => r.op === 'complete' && r.status === 200).length;
    try {
      for (let round = 0; round < 5; round++) {
        const before = completes();
        while (completes() < before + 20) await new Promise((r) => setTimeout(r, 20));
        terminated += await terminateSessions(database);
      }
      const before = completes();
      while (completes() < before + 20) await new Promise((r) => setTimeout(r, 20));
    } finally {
      running = false;
      await slots;
    }
    expect(terminated).toBeGreaterThan(5);
    const reader = await subscribe(bases[1]!, { monitor: queue.id, subscriber: 'agent:auditor' }, queue.ownerToken);
    const history = leaseHistory(await replayAll(bases[1]!, reader));
    const bySeq = new Map(history.map((h) => [h.seq, h]));
    // Work never ran out here: every stored completion by a slot is followed by the grant it took, by the same
    // slot (when the subject it took had lapsed in someone else's hands, the expiry is recorded first).
    const grantAfter = (seq: number) => {
      const next = bySeq.get(seq + 1);
      return next?.action === 'expired' ? bySeq.get(seq + 2) : next;
    };
    const broken = history.filter((h) => h.action === 'complete').filter((h) => {
      const next = grantAfter(h.seq);
      return next?.action !== 'claim' || next.holder !== h.holder;
    });
    expect(broken).toEqual([]);
    // Every answered complete-and-next names the two records it made.
    for (const r of records.filter((x) => x.op === 'complete' && x.status === 200 && x.body.next)) {
      expect(bySeq.get(r.body.seq)).toMatchObject({ action: 'complete', subject: r.subject, holder: r.holder });
      expect(grantAfter(r.body.seq)).toMatchObject({ action: 'claim', subject: r.body.next.subject, holder: r.holder });
    }
    // Whether a termination met a commit in flight (a 503 to its client) or only idle sessions is up to the
    // scheduler; the sessions were ended (above), and what is promised is the atomicity checked here either way.
    console.info(`take-next under terminations: ${terminated} sessions ended, ${completes()} of ${published.size} completed, ${records.filter((r) => r.status === 503 || r.status === 0).length} requests refused or cut`);
    expect(checkLeases(records, history).violations).toEqual([]);
  });

  it('never grants a subject to two clients, never idles while work waits, and gets every subject done, through a killed node', { timeout: 240_000 }, async () => {
    // The node killed below restarts on its address: a port outside the ephemeral range stays free for it.
    const victimPort = await stablePort();
    const [first, last] = shared();
    const nodes = [first!, await cluster.startOne([], victimPort), last!];
    const bases = nodes.map((n) => n.base);
    const queue = await createMonitor(bases[0]!, { capabilities: ['observe', 'act'], types: ['test.job'] });
    const clients = await Promise.all(
      Array.from({ length: 8 }, (_, i) => subscribe(bases[i % 3]!, { monitor: queue.id, subscriber: `agent:slot-${i}`, capabilities: ['act'], filter: { types: ['test.job'] } }, queue.ownerToken)),
    );
    const records: LeaseRecord[] = [];
    const noWork: NoWork[] = [];
    const published = new Map<string, number>();
    let running = true;
    const slots = runTakeClients({ clients, bases: () => bases, running: () => running, records, noWork });
    const progress = setInterval(() => {
      const by = (status: number) => records.filter((r) => r.status === status).length;
      console.error(`take-next: ${published.size} published, ${records.length} records (${by(200)} 200, ${by(201)} 201, ${by(0)} unanswered, ${by(503)} 503), ${noWork.length} NO_WORK; last publish refused: ${lastRefusal}`);
    }, 10_000);
    try {
      // 250 subjects, half of them done by the slots while a node dies and comes back (the rest by the
      // drain): some 250 grants, 25 lapsed leases and a kill in the middle of the slots' work, which is every
      // case the checks below judge. (It was 500 and 250 done: the same cases twice over.)
      await produce(() => bases, queue.id, queue.ownerToken, 100, published, 'a');
      // A node dies in the middle of it and comes back on its address.
      const victim = nodes[1]!;
      await victim.kill();
      await produce(() => [bases[0]!, bases[2]!], queue.id, queue.ownerToken, 50, published, 'b');
      const again = await cluster.startOne([], victimPort);
      bases[1] = again.base;
      await produce(() => bases, queue.id, queue.ownerToken, 100, published, 'c');
      while (records.filter((r) => r.op === 'complete' && r.status === 200).length < 125) await new Promise((r) => setTimeout(r, 100));
      // Then the slots run dry: they take what is left, each lapsed lease once it lapses, and are told
      // NO_WORK while nothing is free, the answers idleWhileWorkWaited judges (with work always waiting,
      // a run saw none). Waiting takes racing for lapsed leases across the nodes is also where a node
      // answered grants PostgreSQL had refused (two holders, one fence: src/cluster/cluster-commit.ts).
      const idleBefore = noWork.length;
      await untilTrue('each slot to be told NO_WORK twice', () => noWork.length >= idleBefore + 2 * clients.length);
    } finally {
      running = false;
      await slots;
      clearInterval(progress);
    }
    const finisher = await subscribe(bases[0]!, { monitor: queue.id, subscriber: 'agent:finisher', capabilities: ['act'], filter: { types: ['test.job'] } }, queue.ownerToken);
    await drain(bases[0]!, finisher);

    const reader = await subscribe(bases[2]!, { monitor: queue.id, subscriber: 'agent:auditor' }, queue.ownerToken);
    const history = leaseHistory(await replayAll(bases[2]!, reader));
    const verdict = checkLeases(records, history);
    expect(verdict.violations).toEqual([]);
    expect(verdict.grants).toBeGreaterThan(125);
    expect(idleWhileWorkWaited(noWork, published, history)).toEqual([]);
    const done = new Set(history.filter((h) => h.action === 'complete').map((h) => h.subject));
    const left = [...published.keys()].filter((s) => !done.has(s));
    for (const s of left.slice(0, 3)) console.error(`left undone: ${s}: ${JSON.stringify(history.filter((h) => h.subject === s))} records: ${JSON.stringify(records.filter((r) => r.subject === s).map((r) => [r.op, r.status, r.node, r.sentAt]))}`);
    expect(left).toEqual([]);
  });
});
