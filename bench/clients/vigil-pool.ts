// A Vigil worker pool, as a user would run it against BullMQ's and
// graphile-worker's (protocol.md §21): one process, `slots` slots under one
// subscription, each holding at most one lease at a time; an empty slot takes
// the next subject, a busy one completes its subject and takes the next. The
// work itself is a no-op, as in the queues' rows. Modes:
//   rpc   — each turn, every slot's call goes out together as one JSON-RPC
//           batch (as one BullMQ worker of concurrency 50 shares one Redis
//           connection); the server commits a batch's calls as one group
//   http  — each slot its own keep-alive connection and requests, no batching
//   items — each turn one call: complete {items: [every held lease]} with
//           next {count: slots} (the batched shape graphile-worker's
//           localQueue and batched completion stand for)
// Runs until `jobs` subjects are completed or `durationMs` passes; reports the
// cycles (subjects taken and completed), every fence and subject granted (for
// the audit), and this process's CPU. Self-contained: it needs only the base
// URL and the subscription.
import { childArgs, finish, readyThenGo } from '../lib/child-side.ts';
import { keepAlive } from '../lib/keep-alive.ts';
import { nowMs } from '../lib/stats.ts';

interface Args {
  base: string;
  subscription: string;
  token: string;
  slots: number;
  jobs: number;
  durationMs: number;
  mode: 'rpc' | 'http' | 'items';
}

interface Lease {
  subject: string;
  fence: number;
}

const args = childArgs<Args>();
// One keep-alive connection per slot in `http` mode, one for the pool otherwise (keep-alive.ts).
const connections = Array.from({ length: args.mode === 'http' ? args.slots : 1 }, () => keepAlive(args.base));
const idle = [...connections];
const path = `/subscriptions/${args.subscription}/leases`;
let cycles = 0;
let failed = 0;
let requests = 0;
/** Every grant, as the pool saw it (subject, fence): a subject granted twice while held would show here. */
const grants: Array<[string, number]> = [];

const noteGrant = (lease: Lease | null | undefined): Lease | undefined => {
  if (!lease) return undefined;
  grants.push([lease.subject, lease.fence]);
  return { subject: lease.subject, fence: lease.fence };
};

async function post(route: string, body: unknown): Promise<{ status: number; body: any }> {
  requests++;
  const connection = idle.pop()!;
  try {
    const reply = await connection.post(route, JSON.stringify(body), args.token);
    return { status: reply.status, body: reply.body ? JSON.parse(reply.body) : undefined };
  } finally {
    idle.push(connection);
  }
}

const done = (until: number) => cycles >= args.jobs || nowMs() >= until;

/** One slot's call for this turn: take the next, or complete the held one and take the next. */
const callOf = (held: Lease | undefined) =>
  held
    ? { method: 'leases/complete', params: { subscription: args.subscription, subject: held.subject, fence: held.fence, next: true } }
    : { method: 'leases/claim', params: { subscription: args.subscription, next: true } };

async function runRpc(until: number): Promise<void> {
  const slots: Array<Lease | undefined> = new Array(args.slots).fill(undefined);
  let idleTurns = 0;
  while (!done(until)) {
    const batch = slots.map((held, id) => ({ jsonrpc: '2.0', id, ...callOf(held) }));
    const reply = await post('/rpc', batch);
    if (reply.status !== 200) {
      failed++;
      continue;
    }
    let granted = 0;
    for (const r of reply.body as Array<{ id: number; result?: any; error?: any }>) {
      const held = slots[r.id];
      if (r.result) {
        if (held) cycles++;
        slots[r.id] = noteGrant(held ? r.result.next : r.result.lease);
        if (slots[r.id]) granted++;
      } else {
        if (r.error?.data?.code !== 'NO_WORK') failed++;
        slots[r.id] = undefined;
      }
    }
    // Nothing held and nothing granted: the queue is empty (the pool is done with what was published).
    if (granted === 0 && slots.every((s) => s === undefined) && ++idleTurns > 3) break;
  }
}

async function runHttp(until: number): Promise<void> {
  await Promise.all(
    Array.from({ length: args.slots }, async () => {
      let held: Lease | undefined;
      let idle = 0;
      while (!done(until)) {
        const call = callOf(held);
        const { subscription: _, ...body } = call.params;
        const reply = await post(`${path}/${call.method.slice('leases/'.length)}`, body);
        if (reply.status === 200 || reply.status === 201) {
          if (held) cycles++;
          held = noteGrant(held ? reply.body.next : reply.body.lease);
          idle = 0;
        } else {
          if (reply.body?.code !== 'NO_WORK') failed++;
          held = undefined;
          if (++idle > 3) return;
        }
      }
    }),
  );
}

async function runItems(until: number): Promise<void> {
  let held: Lease[] = [];
  let idle = 0;
  while (!done(until)) {
    const reply =
      held.length === 0
        ? await post(`${path}/claim`, { next: true, count: args.slots })
        : await post(`${path}/complete`, { items: held.map((l) => ({ subject: l.subject, fence: l.fence })), next: { count: args.slots } });
    if (reply.status === 200 || reply.status === 201) {
      cycles += held.length;
      held = ((held.length === 0 ? reply.body.leases : reply.body.next) as Lease[]).map((l) => noteGrant(l)!);
      idle = held.length === 0 ? idle + 1 : 0;
    } else {
      if (reply.body?.code !== 'NO_WORK') failed++;
      held = [];
      idle++;
    }
    if (idle > 3) break;
  }
}

await readyThenGo();
const cpu0 = process.cpuUsage();
const start = nowMs();
const until = start + args.durationMs;
if (args.mode === 'rpc') await runRpc(until);
else if (args.mode === 'http') await runHttp(until);
else await runItems(until);
const elapsedMs = nowMs() - start;
const cpu = process.cpuUsage(cpu0);
for (const connection of connections) connection.close();
finish({ cycles, failed, requests, elapsedMs, cpuSeconds: (cpu.user + cpu.system) / 1e6, grants });
