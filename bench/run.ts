// `npm run bench [-- --quick] [-- --only publish,sse,...] [-- --transport uws]`:
// starts real servers on loopback, drives them from separate load processes,
// prints a table of figures with their same-run yardsticks (uWS and node:http
// side by side) and a pass/fail summary, and writes
// bench/results/<timestamp>.json. What each figure means: bench/README.md.
// Each scenario is one file under bench/scenarios/. The floor (a bare durable
// server, scenarios/floor.ts) runs whenever publish or lease does.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import type { BenchContext, Sizes } from './lib/context.ts';
import { log, Report, type Transport } from './lib/report.ts';
import { round } from './lib/stats.ts';
import { bareFanOut } from './scenarios/bare-fanout.ts';
import { coldStartScenario } from './scenarios/cold-start.ts';
import { type BullmqFigures, bullmqRate, leaseScenario, redisRate } from './scenarios/lease.ts';
import { floorScenario, reportFloor } from './scenarios/floor.ts';
import { clusterScenario } from './scenarios/cluster.ts';
import { memoryScenario } from './scenarios/memory.ts';
import { publishScenario } from './scenarios/publish.ts';
import { queuesScenario } from './scenarios/queues.ts';
import { sentinelFleet, wideRecipe } from './scenarios/recipes.ts';
import { scalingScenario } from './scenarios/scaling.ts';
import { type SseFigures, sseScenario } from './scenarios/sse.ts';

const scenarioNames = ['publish', 'sse', 'lease', 'queues', 'memory', 'scaling', 'cli', 'cluster', 'recipes'] as const;
type ScenarioName = (typeof scenarioNames)[number];

const argv = process.argv.slice(2);
const flagValue = (flag: string) => (argv.includes(flag) ? (argv[argv.indexOf(flag) + 1] ?? '') : undefined);
const quick = argv.includes('--quick');
const only = flagValue('--only')?.split(',');
for (const name of only ?? []) {
  if (!(scenarioNames as readonly string[]).includes(name)) throw new Error(`--only takes a comma-separated list of ${scenarioNames.join(', ')}; got "${name}"`);
}
const transportFlag = flagValue('--transport') ?? 'both';
if (!['both', 'uws', 'node'].includes(transportFlag)) throw new Error(`--transport takes both, uws or node; got "${transportFlag}"`);
const transports: Transport[] = transportFlag === 'both' ? ['uws', 'node'] : [transportFlag as Transport];
const wanted = (name: ScenarioName) => !only || only.includes(name);

const size: Sizes = quick
  ? { durationMs: 3000, stored: 100_000, streams: 10_000, events: 100, leaseMs: 3000, wakeSamples: 100, actors: 20_000, scalingMs: 2000 }
  : { durationMs: 6000, stored: 1_000_000, streams: 10_000, events: 100, leaseMs: 6000, wakeSamples: 300, actors: 100_000, scalingMs: 4000 };

function currentCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

const ctx: BenchContext = {
  commit: currentCommit(),
  quick,
  size,
  report: new Report(),
  // --profile: every server writes a CPU profile to /tmp/vigil-bench-profiles when it stops.
  nodeFlags: argv.includes('--profile') ? ['--cpu-prof', '--cpu-prof-dir=/tmp/vigil-bench-profiles'] : [],
};

const machine = {
  nproc: os.cpus().length,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  node: process.version,
  platform: `${os.type()} ${os.release()}`,
  memory_gb: round(os.totalmem() / 2 ** 30, 1),
};
const loadAvg = () => os.loadavg().map((l) => round(l, 2));
const loadBefore = loadAvg();
const started = new Date();
const stamp = started.toISOString().replace(/[:.]/g, '-');
mkdirSync('bench/results', { recursive: true });
log(`${quick ? 'quick' : 'full'} run on ${machine.nproc} × ${machine.cpu}, Node ${machine.node}, load ${loadBefore.join(' ')}; transports ${transports.join(', ')}`);

const extra: Record<string, unknown> = {};
let failures = 0;
/** A scenario that fails is reported and the run goes on with the next. */
async function attempt(name: string, run: () => Promise<unknown>): Promise<void> {
  try {
    const out = await run();
    if (out !== undefined) extra[name] = out;
  } catch (error) {
    failures++;
    log(`${name} failed: ${(error as Error).stack ?? error}`);
    ctx.report.note(`${name} FAILED: ${(error as Error).message}`);
  }
}
if (wanted('publish')) for (const t of transports) await attempt(`publish ${t}`, () => publishScenario(ctx, t));
if (wanted('sse')) {
  const vigil = new Map<Transport, SseFigures>();
  for (const t of transports) await attempt(`sse ${t}`, async () => vigil.set(t, await sseScenario(ctx, t)).get(t));
  await attempt('sse bare broadcaster', async () => {
    const bare = await bareFanOut(ctx);
    for (const [t, figures] of vigil) {
      const scenario = '3 SSE';
      const p99 = round(figures.p99 / bare.p99, 2);
      ctx.report.add(t, { scenario, figure: 'p99 publish → last delivery against a bare uWS broadcaster', value: figures.p99, unit: 'ms', baseline: { name: 'bare uWS broadcaster, same readers, p99', value: bare.p99, unit: 'ms' }, ratio: p99, target: '≤ 1.5× bare', met: p99 <= 1.5 });
      const rss = round(figures.perStreamKB / bare.perStreamKB, 2);
      ctx.report.add(t, { scenario, figure: 'RSS per open stream against a bare uWS broadcaster', value: figures.perStreamKB, unit: 'KB', baseline: { name: 'bare uWS broadcaster, RSS per stream', value: bare.perStreamKB, unit: 'KB' }, ratio: rss, target: '≤ 1.5× bare', met: rss <= 1.5 });
    }
    return bare;
  });
}
let bullmq: BullmqFigures | undefined;
let leaseCpuUs: number | undefined;
if (wanted('lease')) {
  await attempt('lease', async () => {
    const redis = await redisRate(ctx);
    const figures = await bullmqRate(ctx);
    bullmq = figures;
    for (const t of transports) {
      await attempt(`lease ${t}`, async () => {
        const cpu = await leaseScenario(ctx, t, redis, figures);
        if (t === 'uws') leaseCpuUs = cpu;
      });
    }
  });
}
if (wanted('publish') || wanted('lease')) {
  await attempt('floor', async () => {
    const floor = await floorScenario(ctx);
    reportFloor(ctx, floor, bullmq, leaseCpuUs);
    return floor;
  });
}
if (wanted('queues')) await attempt('queues', () => queuesScenario(ctx));
if (wanted('memory')) await attempt('memory', () => memoryScenario(ctx));
if (wanted('cli')) await attempt('cli', () => coldStartScenario(ctx));
// A full run replaces the committed curves; a quick run's go next to its JSON.
if (wanted('scaling')) await attempt('scaling', () => scalingScenario(ctx, quick ? `bench/results/scaling-${stamp}.svg` : 'bench/scaling.svg'));
if (wanted('cluster')) await attempt('cluster', () => clusterScenario(ctx));
if (wanted('recipes')) {
  await attempt('recipes wide', () => wideRecipe(ctx));
  await attempt('recipes sentinels', () => sentinelFleet(ctx));
}
const loadAfter = loadAvg();
const minutes = round((Date.now() - started.getTime()) / 60_000, 1);

console.log(ctx.report.table());
console.log(`\n${ctx.report.summary()}`);
console.log(`commit ${ctx.commit}; ${machine.nproc} × ${machine.cpu}, Node ${machine.node}; load average ${loadBefore.join(' ')} before, ${loadAfter.join(' ')} after; ${minutes} min${quick ? '; --quick' : ''}`);
for (const n of ctx.report.notes) console.log(`note: ${n}`);

const file = `bench/results/${stamp}.json`;
const results = { started: started.toISOString(), commit: ctx.commit, minutes, quick, transports, machine, load: { before: loadBefore, after: loadAfter }, rows: ctx.report.rows, notes: ctx.report.notes, summary: ctx.report.summary(), ...extra };
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`results: ${file}`);
if (failures > 0) process.exitCode = 1;
