// 4 lease contention: 50 acting subscriptions race for 100 subjects (claim,
// complete on a win), against Redis SET NX PX measured in the same run; then
// the ceiling the same server's GET /discover rate puts on any lease path,
// and an audit that replays every lease observation to check one holder at
// a time.
import { execFileSync } from 'node:child_process';
import { runChildren } from '../lib/children.ts';
import { type BenchContext, load, loadProcesses } from '../lib/context.ts';
import { json } from '../lib/http.ts';
import { fmt, log, type Transport } from '../lib/report.ts';
import { type BenchServer, startServer } from '../lib/server.ts';
import { createMonitor, type Sub, subscribe } from '../lib/setup.ts';
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

export async function leaseScenario(ctx: BenchContext, transport: Transport, redis: number, bullmq: BullmqFigures): Promise<void> {
  const { report, size } = ctx;
  const server = await startServer({ transport, durable: true, nodeFlags: ctx.nodeFlags });
  try {
    const owner = await createMonitor(server.request, 'bench-lease', ['observe', 'act']);
    const audit = await subscribe(server.request, 'bench-lease', owner, 'agent:audit', { from: 'earliest' });
    await json(server.request, 'POST', '/monitors/bench-lease/observations', { observations: Array.from({ length: 100 }, (_, i) => ({ type: 'bench.work', subject: `s${i}`, data: {} })) }, owner);
    const workers: Sub[] = [];
    for (let i = 0; i < 50; i++) workers.push(await subscribe(server.request, 'bench-lease', owner, `agent:worker-${i}`, { capabilities: ['observe', 'act'] }));
    const result = await load(server, { mode: 'lease', concurrency: 50, durationMs: size.leaseMs, subscriptions: workers, subjects: 100 });
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
    const cycles = result.wins / result.elapsed;
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
    const { claims, violations } = await auditHolders(server, audit);
    report.add(transport, { scenario: '4 lease', figure: 'two holders at once (audit of every recorded claim)', value: violations, unit: 'violations', target: '0', met: violations === 0 && claims > 0 });
    log(`lease ${transport}: ${fmt(claims)} recorded claims audited`);
    if (result.failed > 0) report.note(`lease ${transport}: ${result.failed} requests failed`);
  } finally {
    await server.stop();
  }
}

/** Replays the lease observations; a claim while another holder holds the subject is a violation. */
async function auditHolders(server: BenchServer, audit: Sub): Promise<{ claims: number; violations: number }> {
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
