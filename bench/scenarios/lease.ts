// 4 lease contention: 50 acting subscriptions race for 100 subjects (claim,
// complete on a win), driven by `vigil bench leases` (the engine users run,
// src/bench), against Redis SET NX PX measured in the same run; then the
// ceiling the same server's GET /discover rate puts on any lease path, the
// engine's own judgement of duplicates from its clients' records, and an
// audit that replays every lease observation to check one holder at a time.
import { execFileSync } from 'node:child_process';
import { runChildren } from '../lib/children.ts';
import { type BenchContext, load, loadProcesses } from '../lib/context.ts';
import { json } from '../lib/http.ts';
import { fmt, log, type Transport } from '../lib/report.ts';
import { type BenchServer, startServer } from '../lib/server.ts';
import { createMonitor, type Sub, subscribe } from '../lib/setup.ts';
import { runLeases } from '../../src/bench/run-leases.ts';
import type { LeaseSpec } from '../../src/bench/spec.ts';
import { round, sleep } from '../lib/stats.ts';

async function redisPort(): Promise<number> {
  const port = 6379;
  const ping = () => {
    try {
      return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === 'PONG';
    } catch {
      return false;
    }
  };
  if (!ping()) {
    log('no redis-server answers on 127.0.0.1:6379; starting one');
    execFileSync('redis-server', ['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no']);
    for (let i = 0; i < 50 && !ping(); i++) await sleep(100);
  }
  return port;
}

/** The yardstick: Redis SET NX PX attempts per second, 50 raw-socket clients on 100 keys. */
export async function redisRate(ctx: BenchContext): Promise<number> {
  const port = await redisPort();
  const redis = await runChildren<{ attempts: number; elapsedMs: number }>('redis', () => ({ concurrency: 25, durationMs: ctx.size.leaseMs, keys: 100, port }), loadProcesses);
  const rate = redis.reduce((a, r) => a + r.attempts, 0) / (Math.max(...redis.map((r) => r.elapsedMs)) / 1000);
  log(`Redis SET NX PX, 50 clients: ${fmt(rate)} attempts/s`);
  return rate;
}

/** The BullMQ yardstick: jobs taken under its lock and completed per second, and the CPU each cost. */
export interface BullmqFigures {
  cyclesPerSecond: number;
  /** The worker process's CPU plus Redis's, per cycle. */
  cpuUsPerCycle: number;
}

function redisCpuSeconds(port: number): number {
  const info = execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'info', 'cpu'], { encoding: 'utf8' });
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/** BullMQ (one Worker, concurrency 50) on the same Redis: the shape "many workers, each job held by one". */
export async function bullmqRate(ctx: BenchContext): Promise<BullmqFigures> {
  const port = await redisPort();
  const jobs = ctx.quick ? 20_000 : 60_000;
  const redis0 = redisCpuSeconds(port);
  const [result] = await runChildren<{ cycles: number; elapsedMs: number; cpuSeconds: number }>('bullmq', () => ({ concurrency: 50, durationMs: ctx.size.leaseMs, jobs, port }), 1);
  const redisCpu = redisCpuSeconds(port) - redis0;
  const cyclesPerSecond = result!.cycles / (result!.elapsedMs / 1000);
  const cpuUsPerCycle = ((result!.cpuSeconds + redisCpu) * 1e6) / Math.max(1, result!.cycles);
  log(`BullMQ, one Worker of concurrency 50: ${fmt(cyclesPerSecond)} jobs/s, ${round(cpuUsPerCycle)} µs of worker and Redis CPU per job`);
  return { cyclesPerSecond, cpuUsPerCycle };
}

/**
 * The contention load, driven by `vigil bench leases` (src/bench): 50 clients, each its own acting
 * subscription, claim a random subject of 100 and complete it at once on a win, for `durationMs`.
 * The engine judges duplicates from its clients' own records; the server's CPU is read from the
 * release of the clients to the end of the load.
 */
async function contention(server: BenchServer, monitor: string, owner: string, durationMs: number) {
  let cpu0 = 0;
  let cpu = 0;
  const spec: LeaseSpec = {
    kind: 'leases',
    bases: [server.base],
    monitor,
    ownerToken: owner,
    keep: true,
    threads: 2,
    timeoutMs: 30_000,
    seed: 30,
    mode: 'named',
    clients: 50,
    subjects: 100,
    skew: { kind: 'uniform' },
    hold: { minMs: 0, maxMs: 0 },
    durationMs,
    cycles: undefined,
    leaseSeconds: 60,
    renewMs: 20_000,
    crash: 0,
    stall: 0,
    release: 0,
    reject: 0,
  };
  const run = await runLeases(spec, { started: () => (cpu0 = server.cpuSeconds()), stopped: () => (cpu = server.cpuSeconds() - cpu0) });
  const f = run.figures;
  const requests = Object.values(run.tally.outcomes).reduce((a, n) => a + n, 0);
  const failed = Object.entries(f.refusals).filter(([k]) => !/ (LEASE_HELD)$/.test(k)).reduce((a, [, n]) => a + n, 0);
  return {
    figures: f,
    rate: f.claims.perSecond,
    p99: f.latency.claim?.p99 ?? Number.NaN,
    wins: f.grants.total,
    completed: f.cycles.total,
    ok: f.claims.attempts,
    elapsed: f.elapsedSeconds,
    cpuUs: (cpu * 1e6) / Math.max(1, requests),
    failed,
  };
}

/** Returns the server CPU per lease request (µs), which the floor's row judges. */
export async function leaseScenario(ctx: BenchContext, transport: Transport, redis: number, bullmq: BullmqFigures): Promise<number> {
  const { report, size } = ctx;
  const server = await startServer({ transport, durable: true, nodeFlags: ctx.nodeFlags });
  try {
    const owner = await createMonitor(server.request, 'bench-lease', ['observe', 'act']);
    const audit = await subscribe(server.request, 'bench-lease', owner, 'agent:audit', { from: 'earliest' });
    const result = await contention(server, 'bench-lease', owner, size.leaseMs);
    const ratio = round(result.rate / redis, 3);
    report.add(transport, {
      scenario: '4 lease',
      figure: 'claim attempts per second (50 clients, 100 subjects)',
      value: result.rate,
      unit: 'claims/s',
      baseline: { name: 'Redis SET NX PX, 50 clients', value: redis, unit: 'attempts/s' },
      ratio,
      target: '≥ 0.25 of Redis',
      met: ratio >= 0.25,
    });
    report.add(transport, { scenario: '4 lease', figure: 'claim latency p99', value: result.p99, unit: 'ms' });
    const cycles = result.completed / result.elapsed;
    report.add(transport, {
      scenario: '4 lease',
      figure: 'cycles per second: claims won and completed (50 clients)',
      value: cycles,
      unit: 'cycles/s',
      baseline: { name: 'BullMQ jobs taken and completed, concurrency 50', value: bullmq.cyclesPerSecond, unit: 'jobs/s' },
      ratio: round(cycles / bullmq.cyclesPerSecond, 3),
      target: '≥ 1.0 of BullMQ',
      met: cycles >= bullmq.cyclesPerSecond,
    });
    // Every request a cycle needed (lost claims included) counts against it.
    const cpuPerCycle = (result.cpuUs * (result.ok + result.wins)) / Math.max(1, result.wins);
    report.add(transport, {
      scenario: '4 lease',
      figure: 'server CPU per cycle',
      value: cpuPerCycle,
      unit: 'µs',
      baseline: { name: 'BullMQ worker + Redis CPU per job', value: bullmq.cpuUsPerCycle, unit: 'µs' },
      ratio: round(cpuPerCycle / bullmq.cpuUsPerCycle, 2),
    });
    // What the target asks of the HTTP door alone: the same server's cheapest request rate, spread
    // over the requests one claim attempt takes (the claim, and the complete after a win).
    const discover = await load(server, { mode: 'discover', concurrency: 50, durationMs: size.leaseMs / 2 });
    report.add(transport, {
      scenario: '4 lease',
      figure: 'server CPU per lease request',
      value: result.cpuUs,
      unit: 'µs',
      baseline: { name: 'server CPU per GET /discover, same server', value: discover.cpuUs, unit: 'µs' },
      ratio: round(result.cpuUs / discover.cpuUs, 2),
      target: '≤ 1.5× a discover',
      met: result.cpuUs <= 1.5 * discover.cpuUs,
    });
    const requestsPerClaim = 1 + result.wins / Math.max(1, result.ok);
    const ceiling = discover.rate / requestsPerClaim;
    report.add(transport, {
      scenario: '4 lease',
      figure: 'ceiling: claims/s if each lease request cost one GET /discover',
      value: ceiling,
      unit: 'claims/s',
      baseline: { name: 'Redis SET NX PX, 50 clients', value: redis, unit: 'attempts/s' },
      ratio: round(ceiling / redis, 3),
    });
    report.note(`lease ${transport}: ceiling = GET /discover ${fmt(discover.rate)} req/s on the same server ÷ ${requestsPerClaim.toFixed(2)} requests per claim attempt`);
    const duplicates = result.figures.duplicates + result.figures.lateEndsAccepted;
    report.add(transport, { scenario: '4 lease', figure: "two holders at once, judged from the clients' records (vigil bench leases)", value: duplicates, unit: 'violations', target: '0', met: duplicates === 0 && result.wins > 0 });
    const { claims, violations } = await auditHolders(server, audit);
    report.add(transport, { scenario: '4 lease', figure: 'two holders at once (audit of every recorded claim)', value: violations, unit: 'violations', target: '0', met: violations === 0 && claims > 0 });
    log(`lease ${transport}: ${fmt(claims)} recorded claims audited`);
    if (result.failed > 0) report.note(`lease ${transport}: ${result.failed} requests failed`);
    return result.cpuUs;
  } finally {
    await server.stop();
  }
}

/** Replays the lease observations; a claim while another holder holds the subject is a violation. */
export async function auditHolders(server: BenchServer, audit: Sub): Promise<{ claims: number; violations: number }> {
  const holders = new Map<string, string | null>();
  let claims = 0;
  let violations = 0;
  for (;;) {
    const page = await json<{ next: number; observations: Array<{ type: string; data: { payload?: { action: string; subject: string; holder: string } } }> }>(
      server.request,
      'GET',
      `/subscriptions/${audit.id}/pull?limit=1000`,
      undefined,
      audit.token,
    );
    if (page.observations.length === 0) break;
    for (const o of page.observations) {
      const p = o.data.payload;
      if (o.type !== 'ai.vigil.monitor.lease' || !p) continue;
      const current = holders.get(p.subject) ?? null;
      if (p.action === 'claim') {
        claims++;
        if (current !== null && current !== p.holder) violations++;
        holders.set(p.subject, p.holder);
      } else if (['complete', 'release', 'reject', 'expired'].includes(p.action)) holders.set(p.subject, null);
    }
    await json(server.request, 'POST', `/subscriptions/${audit.id}/ack`, { cursor: page.next }, audit.token);
  }
  return { claims, violations };
}
