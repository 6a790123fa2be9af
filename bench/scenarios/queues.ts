// Issue 46 point 4: Vigil's worker pool against the queues users would pick
// instead, in the same run, each at concurrency 50 over the same number of
// jobs: BullMQ on a Redis of the bench's own with AOF everysec (and without
// persistence), graphile-worker on the local PostgreSQL plain and batched
// (localQueue of 500, batched completion), and the pool (bench/clients/
// vigil-pool.ts: 50 slots, take-next, then complete-and-take-next) on a
// SQLite server and on a PostgreSQL node. Every pool run is audited: the lease
// history replayed (no claim while another holder held the subject) and the
// pool's own grants (no subject handed out twice: each was completed at once).
import { createTestDatabase, postgresUnavailable } from '../../test/support/postgres.ts';
import { runChildren } from '../lib/children.ts';
import type { BenchContext } from '../lib/context.ts';
import { json } from '../lib/http.ts';
import { startPrivateRedis } from '../lib/private-redis.ts';
import { fmt, log } from '../lib/report.ts';
import { type BenchServer, startServer } from '../lib/server.ts';
import { createMonitor, subscribe } from '../lib/setup.ts';
import { round } from '../lib/stats.ts';
import { auditHolders } from './lease.ts';

const concurrency = 50;
const scenario = '4b queues';

interface Rate {
  cyclesPerSecond: number;
  /** CPU per cycle of the queue's server side (Redis, or a Vigil server), µs; NaN when not measured. */
  serverCpuUs: number;
  /** CPU per cycle of the worker process, µs. */
  workerCpuUs: number;
}

type PoolMode = 'rpc' | 'items' | 'http';

interface PoolResult extends Rate {
  violations: number;
  claimsAudited: number;
}

async function bullmq(ctx: BenchContext, jobs: number, aof: boolean): Promise<Rate> {
  const redis = await startPrivateRedis(aof);
  try {
    const before = redis.cpuSeconds();
    const [r] = await runChildren<{ cycles: number; elapsedMs: number; cpuSeconds: number }>('bullmq', () => ({ concurrency, durationMs: capMs(ctx), jobs, port: redis.port }), 1);
    const cycles = Math.max(1, r!.cycles);
    return { cyclesPerSecond: r!.cycles / (r!.elapsedMs / 1000), serverCpuUs: ((redis.cpuSeconds() - before) * 1e6) / cycles, workerCpuUs: (r!.cpuSeconds * 1e6) / cycles };
  } finally {
    await redis.stop();
  }
}

async function graphile(ctx: BenchContext, jobs: number, batched: boolean): Promise<Rate> {
  const database = await createTestDatabase();
  try {
    const [r] = await runChildren<{ cycles: number; elapsedMs: number; cpuSeconds: number; serverCpuSeconds: number }>(
      'graphile',
      () => ({ connectionString: database.url, jobs, concurrency, durationMs: capMs(ctx), batched }),
      1,
    );
    const cycles = Math.max(1, r!.cycles);
    return { cyclesPerSecond: r!.cycles / (r!.elapsedMs / 1000), serverCpuUs: (r!.serverCpuSeconds * 1e6) / cycles, workerCpuUs: (r!.cpuSeconds * 1e6) / cycles };
  } finally {
    await database.drop();
  }
}

const capMs = (ctx: BenchContext) => (ctx.quick ? 60_000 : 120_000);

/** Publishes `jobs` subjects on a fresh monitor, runs the pool over them, and audits what it did. */
async function pool(ctx: BenchContext, server: BenchServer, jobs: number, mode: PoolMode, name: string): Promise<PoolResult> {
  const owner = await createMonitor(server.request, name, ['observe', 'act']);
  for (let i = 0; i < jobs; i += 1000) {
    const observations = Array.from({ length: Math.min(1000, jobs - i) }, (_, j) => ({ type: 'bench.job', subject: `job-${i + j}`, data: { n: i + j } }));
    await json(server.request, 'POST', `/monitors/${name}/observations`, { observations }, owner);
  }
  const audit = await subscribe(server.request, name, owner, 'agent:audit', { from: 'earliest' });
  const worker = await subscribe(server.request, name, owner, 'agent:pool', { capabilities: ['observe', 'act'] });
  const cpu0 = server.cpuSeconds();
  const [r] = await runChildren<{ cycles: number; failed: number; elapsedMs: number; cpuSeconds: number; grants: Array<[string, number]> }>(
    'vigil-pool',
    () => ({ base: server.base, subscription: worker.id, token: worker.token, slots: concurrency, jobs, durationMs: capMs(ctx), mode }),
    1,
  );
  const serverCpu = server.cpuSeconds() - cpu0;
  const cycles = Math.max(1, r!.cycles);
  // Each subject was completed as soon as it was granted: a second grant of one would be a subject handed out twice.
  const granted = new Map<string, number>();
  for (const [subject] of r!.grants) granted.set(subject, (granted.get(subject) ?? 0) + 1);
  const twice = [...granted.values()].filter((n) => n > 1).length;
  const { claims, violations } = await auditHolders(server, audit);
  if (r!.failed > 0) ctx.report.note(`queues ${name}: ${r!.failed} failed calls`);
  log(`pool ${mode} on ${name}: ${fmt(r!.cycles)} cycles in ${round(r!.elapsedMs)} ms, ${round((serverCpu * 1e6) / cycles)} µs server CPU per cycle, ${claims} claims audited`);
  return {
    cyclesPerSecond: r!.cycles / (r!.elapsedMs / 1000),
    serverCpuUs: (serverCpu * 1e6) / cycles,
    workerCpuUs: (r!.cpuSeconds * 1e6) / cycles,
    violations: violations + twice,
    claimsAudited: claims,
  };
}

export interface QueueFigures {
  bullmqAof: Rate;
  bullmqPlain: Rate;
  graphilePlain?: Rate;
  graphileBatched?: Rate;
  sqlite: Partial<Record<PoolMode, PoolResult>>;
  postgres?: Partial<Record<PoolMode, PoolResult>>;
}

export async function queuesScenario(ctx: BenchContext): Promise<QueueFigures> {
  const jobs = ctx.quick ? 10_000 : 20_000;
  const { report } = ctx;
  const pgMissing = await postgresUnavailable();
  const bullmqPlain = await bullmq(ctx, jobs, false);
  const bullmqAof = await bullmq(ctx, jobs, true);
  log(`BullMQ, ${fmt(jobs)} jobs: ${fmt(bullmqPlain.cyclesPerSecond)} jobs/s without persistence, ${fmt(bullmqAof.cyclesPerSecond)} with AOF everysec`);
  const graphilePlain = pgMissing ? undefined : await graphile(ctx, jobs, false);
  const graphileBatched = pgMissing ? undefined : await graphile(ctx, jobs, true);
  if (graphilePlain && graphileBatched) log(`graphile-worker, ${fmt(jobs)} jobs: ${fmt(graphilePlain.cyclesPerSecond)} jobs/s plain, ${fmt(graphileBatched.cyclesPerSecond)} batched`);

  const figures: QueueFigures = { bullmqAof, bullmqPlain, graphilePlain, graphileBatched, sqlite: {} };
  const sqlite = await startServer({ transport: 'uws', durable: true, nodeFlags: ctx.nodeFlags });
  try {
    for (const mode of ['rpc', 'items', 'http'] as const) figures.sqlite[mode] = await pool(ctx, sqlite, jobs, mode, `bench-pool-${mode}`);
  } finally {
    await sqlite.stop();
  }
  if (pgMissing) report.note(`queues: graphile-worker and the PostgreSQL node not measured, ${pgMissing}`);
  else {
    const database = await createTestDatabase();
    const node = await startServer({ transport: 'uws', durable: false, nodeFlags: ctx.nodeFlags, args: ['--store', database.url] });
    try {
      figures.postgres = {};
      for (const mode of ['rpc', 'items'] as const) figures.postgres[mode] = await pool(ctx, node, jobs, mode, `bench-pool-pg-${mode}`);
    } finally {
      await node.stop();
      await database.drop();
    }
  }
  reportQueues(ctx, jobs, figures);
  return figures;
}

/**
 * Cycles per second of CPU, all processes of the system counted (its server, Redis or PostgreSQL,
 * and its worker process): what the system would do with the machine to itself. On a shared, loaded
 * machine wall-clock rates measured one after another move with the other sessions' load (BullMQ
 * without persistence came out slower than with AOF in one run); CPU per cycle does not.
 */
const perCpuSecond = (r: Rate) => 1e6 / (r.serverCpuUs + r.workerCpuUs);

function reportQueues(ctx: BenchContext, jobs: number, f: QueueFigures): void {
  const add = ctx.report.add.bind(ctx.report, 'uws');
  const each = `${fmt(jobs)} jobs, concurrency ${concurrency}`;
  const bullAof = { name: `BullMQ, Redis AOF everysec, ${each}`, value: f.bullmqAof.cyclesPerSecond, unit: 'jobs/s' };
  add({ scenario, figure: 'BullMQ jobs/s, Redis without persistence', value: f.bullmqPlain.cyclesPerSecond, unit: 'jobs/s', baseline: bullAof, ratio: round(f.bullmqPlain.cyclesPerSecond / f.bullmqAof.cyclesPerSecond, 2) });
  const rpc = f.sqlite.rpc!;
  add({ scenario, figure: 'Vigil pool cycles/s (wall clock): take-next, complete-and-next, one JSON-RPC batch per turn (SQLite)', value: rpc.cyclesPerSecond, unit: 'cycles/s', baseline: bullAof, ratio: round(rpc.cyclesPerSecond / f.bullmqAof.cyclesPerSecond, 3) });
  const cpuAof = round(perCpuSecond(rpc) / perCpuSecond(f.bullmqAof), 3);
  add({
    scenario,
    figure: 'Vigil pool cycles per CPU-second (server + pool process), JSON-RPC batches (SQLite)',
    value: perCpuSecond(rpc),
    unit: 'cycles/CPU-s',
    baseline: { name: 'BullMQ (AOF) jobs per CPU-second (Redis + worker)', value: perCpuSecond(f.bullmqAof), unit: 'jobs/CPU-s' },
    ratio: cpuAof,
    target: '≥ 1.0 of BullMQ (AOF)',
    met: cpuAof >= 1,
  });
  add({ scenario, figure: 'the same against BullMQ without persistence', value: rpc.cyclesPerSecond, unit: 'cycles/s', baseline: { name: 'BullMQ, no persistence', value: f.bullmqPlain.cyclesPerSecond, unit: 'jobs/s' }, ratio: round(rpc.cyclesPerSecond / f.bullmqPlain.cyclesPerSecond, 3) });
  add({ scenario, figure: 'Vigil server CPU per cycle (SQLite, JSON-RPC batches)', value: rpc.serverCpuUs, unit: 'µs', baseline: { name: 'Redis CPU per BullMQ job (AOF)', value: f.bullmqAof.serverCpuUs, unit: 'µs' }, ratio: round(rpc.serverCpuUs / f.bullmqAof.serverCpuUs, 2) });
  add({ scenario, figure: 'pool process CPU per cycle (JSON-RPC batches)', value: rpc.workerCpuUs, unit: 'µs', baseline: { name: 'BullMQ worker CPU per job (AOF)', value: f.bullmqAof.workerCpuUs, unit: 'µs' }, ratio: round(rpc.workerCpuUs / f.bullmqAof.workerCpuUs, 2) });
  const http = f.sqlite.http!;
  add({ scenario, figure: 'Vigil pool cycles/s, one HTTP request per slot call (no batching)', value: http.cyclesPerSecond, unit: 'cycles/s', baseline: bullAof, ratio: round(http.cyclesPerSecond / f.bullmqAof.cyclesPerSecond, 3) });
  const items = f.sqlite.items!;
  if (f.graphileBatched && f.graphilePlain) {
    const gb = { name: `graphile-worker batched (localQueue 500, batched completion), ${each}`, value: f.graphileBatched.cyclesPerSecond, unit: 'jobs/s' };
    add({ scenario, figure: 'graphile-worker plain jobs/s', value: f.graphilePlain.cyclesPerSecond, unit: 'jobs/s', baseline: gb, ratio: round(f.graphilePlain.cyclesPerSecond / f.graphileBatched.cyclesPerSecond, 3) });
    const best = perCpuSecond(items) >= perCpuSecond(rpc) ? { r: items, how: 'complete {items} + next {count: 50}' } : { r: rpc, how: 'JSON-RPC batches' };
    add({ scenario, figure: `Vigil pool cycles/s (wall clock), batched (${best.how}; SQLite)`, value: best.r.cyclesPerSecond, unit: 'cycles/s', baseline: gb, ratio: round(best.r.cyclesPerSecond / f.graphileBatched.cyclesPerSecond, 3) });
    const ratio = round(perCpuSecond(best.r) / perCpuSecond(f.graphileBatched), 3);
    add({
      scenario,
      figure: `Vigil pool cycles per CPU-second, batched (${best.how}; SQLite)`,
      value: perCpuSecond(best.r),
      unit: 'cycles/CPU-s',
      baseline: { name: 'graphile-worker batched jobs per CPU-second (PostgreSQL sessions + worker)', value: perCpuSecond(f.graphileBatched), unit: 'jobs/CPU-s' },
      ratio,
      target: '≥ 1.0 of graphile-worker batched',
      met: ratio >= 1,
    });
    add({ scenario, figure: 'graphile-worker batched: PostgreSQL sessions’ CPU per job', value: f.graphileBatched.serverCpuUs, unit: 'µs', baseline: { name: 'its worker process’s CPU per job', value: f.graphileBatched.workerCpuUs, unit: 'µs' } });
  }
  add({ scenario, figure: 'Vigil pool cycles/s, complete {items} + next {count: 50} per turn (SQLite)', value: items.cyclesPerSecond, unit: 'cycles/s', baseline: bullAof, ratio: round(items.cyclesPerSecond / f.bullmqAof.cyclesPerSecond, 3) });
  const runs = Object.values(f.sqlite);
  add({ scenario, figure: `lease audit of the pool runs on SQLite (${runs.reduce((a, r) => a + r.claimsAudited, 0)} claims)`, value: runs.reduce((a, r) => a + r.violations, 0), unit: 'violations', target: '0', met: runs.every((r) => r.violations === 0 && r.claimsAudited > 0) });
  if (f.postgres?.rpc) {
    const pg = f.postgres.rpc;
    const ratio = round(pg.serverCpuUs / rpc.serverCpuUs, 2);
    add({ scenario, figure: 'server CPU per take-next cycle, PostgreSQL node (JSON-RPC batches)', value: pg.serverCpuUs, unit: 'µs', baseline: { name: 'the same on a SQLite node', value: rpc.serverCpuUs, unit: 'µs' }, ratio, target: '≤ 2× SQLite', met: ratio <= 2 });
    add({ scenario, figure: 'Vigil pool cycles/s on a PostgreSQL node (JSON-RPC batches)', value: pg.cyclesPerSecond, unit: 'cycles/s', baseline: { name: 'the same on a SQLite node', value: rpc.cyclesPerSecond, unit: 'cycles/s' }, ratio: round(pg.cyclesPerSecond / rpc.cyclesPerSecond, 2) });
    if (f.postgres.items) {
      add({ scenario, figure: 'Vigil pool cycles/s on a PostgreSQL node (items + next)', value: f.postgres.items.cyclesPerSecond, unit: 'cycles/s', baseline: { name: 'the same on a SQLite node', value: items.cyclesPerSecond, unit: 'cycles/s' }, ratio: round(f.postgres.items.cyclesPerSecond / items.cyclesPerSecond, 2) });
    }
    const pgRuns = Object.values(f.postgres);
    add({ scenario, figure: `lease audit of the pool runs on a PostgreSQL node (${pgRuns.reduce((a, r) => a + r.claimsAudited, 0)} claims)`, value: pgRuns.reduce((a, r) => a + r.violations, 0), unit: 'violations', target: '0', met: pgRuns.every((r) => r.violations === 0 && r.claimsAudited > 0) });
  }
}
