// The floor under the CPU targets of issue 30 (points 1 and 3): the bare
// durable server (bench/clients/bare-durable.mjs) measured by the same load
// processes as Vigil, in the same run. Its CPU per durable publish and per
// lease request against its own GET /discover is what those ratios cost on
// this machine with no more of the protocol than the records a write
// requires: what a write answered after its commit costs more than a read
// answered from memory. Its lease cycles against BullMQ's are about the most
// an HTTP lease server that commits before it answers could show here.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type BenchContext, load } from '../lib/context.ts';
import { fmt, log } from '../lib/report.ts';
import { cpuSecondsOf } from '../lib/server.ts';
import { round } from '../lib/stats.ts';
import type { BullmqFigures } from './lease.ts';

export interface FloorFigures {
  discoverCpuUs: number;
  publishCpuUs: number;
  leaseCpuUs: number;
  cyclesPerSecond: number;
}

export async function floorScenario(ctx: BenchContext): Promise<FloorFigures> {
  const child = spawn(process.execPath, ['bench/clients/bare-durable.mjs'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const match = /^listening (\d+)$/.exec(line);
        if (match) resolve(Number(match[1]));
      });
      child.once('exit', (code) => reject(new Error(`the bare durable server exited (${code}) before listening`)));
    });
    const server = { base: `http://127.0.0.1:${port}/mp/v0`, cpuSeconds: () => cpuSecondsOf(child.pid!) };
    const { durationMs, leaseMs } = ctx.size;
    // Warmed first, as Vigil's yardstick is.
    await load(server, { mode: 'discover', concurrency: 50, durationMs: 1000 });
    const discover = await load(server, { mode: 'discover', concurrency: 50, durationMs });
    const publish = await load(server, { mode: 'publish', concurrency: 50, durationMs, targets: [{ monitor: 'bare', token: 'bare' }] });
    const workers = Array.from({ length: 50 }, (_, i) => ({ id: `w${i}`, token: 'bare' }));
    const lease = await load(server, { mode: 'lease', concurrency: 50, durationMs: leaseMs, subscriptions: workers, subjects: 100 });
    const failed = discover.failed + publish.failed + lease.failed;
    if (failed > 0) throw new Error(`the bare durable server failed ${failed} requests`);
    const figures = { discoverCpuUs: discover.cpuUs, publishCpuUs: publish.cpuUs, leaseCpuUs: lease.cpuUs, cyclesPerSecond: lease.wins / lease.elapsed };
    log(
      `bare durable server: discover ${fmt(discover.rate)} req/s at ${round(discover.cpuUs)} µs, publish ${fmt(publish.rate)} obs/s at ${round(publish.cpuUs)} µs, lease requests at ${round(lease.cpuUs)} µs, ${fmt(figures.cyclesPerSecond)} cycles/s`,
    );
    return figures;
  } finally {
    child.kill('SIGTERM');
  }
}

/**
 * The floor's rows, beside the targets they bound; with Vigil's CPU per lease request of the same
 * run (uWS), the target of issue 46: within 1.3× of the floor's.
 */
export function reportFloor(ctx: BenchContext, floor: FloorFigures, bullmq: BullmqFigures | undefined, vigilLeaseCpuUs?: number): void {
  const yardstick = { name: 'its CPU per GET /discover', value: floor.discoverCpuUs, unit: 'µs' };
  ctx.report.add('uws', {
    scenario: '1 publish',
    figure: 'floor: bare uWS + SQLite server, CPU per durable publish',
    value: floor.publishCpuUs,
    unit: 'µs',
    baseline: yardstick,
    ratio: round(floor.publishCpuUs / floor.discoverCpuUs, 2),
  });
  ctx.report.add('uws', {
    scenario: '4 lease',
    figure: 'floor: bare uWS + SQLite server, CPU per lease request',
    value: floor.leaseCpuUs,
    unit: 'µs',
    baseline: yardstick,
    ratio: round(floor.leaseCpuUs / floor.discoverCpuUs, 2),
  });
  if (vigilLeaseCpuUs !== undefined) {
    const ratio = round(vigilLeaseCpuUs / floor.leaseCpuUs, 2);
    ctx.report.add('uws', {
      scenario: '4 lease',
      figure: 'server CPU per lease request (named subjects, contention) against the floor’s',
      value: vigilLeaseCpuUs,
      unit: 'µs',
      baseline: { name: 'floor: bare uWS + SQLite server, CPU per lease request', value: floor.leaseCpuUs, unit: 'µs' },
      ratio,
      target: '≤ 1.3× the floor',
      met: ratio <= 1.3,
    });
  }
  if (bullmq) {
    ctx.report.add('uws', {
      scenario: '4 lease',
      figure: 'floor: bare uWS + SQLite server, cycles per second',
      value: floor.cyclesPerSecond,
      unit: 'cycles/s',
      baseline: { name: 'BullMQ jobs taken and completed, concurrency 50', value: bullmq.cyclesPerSecond, unit: 'jobs/s' },
      ratio: round(floor.cyclesPerSecond / bullmq.cyclesPerSecond, 3),
    });
  }
}
