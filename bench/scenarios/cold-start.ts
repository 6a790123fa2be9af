// 10 cold start of the CLI: `vigil --version` as a user's shell runs it
// (node bin/vigil.js, a new process each time), against a bare `node -e 0`
// measured in the same run. The target (under 300 ms) holds for the built
// dist/ that `npm install` leaves (the `prepare` script); from the TypeScript
// sources through tsx a start takes seconds, so a stale dist/ is built first
// (lib/built.ts).
import { spawnSync } from 'node:child_process';
import { ensureBuilt } from '../lib/built.ts';
import type { BenchContext } from '../lib/context.ts';
import { round, summary } from '../lib/stats.ts';

const targetMs = 300;

function timeRuns(args: readonly string[], runs: number): number[] {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = process.hrtime.bigint();
    const run = spawnSync(process.execPath, args, { encoding: 'utf8', env: { ...process.env, VIGIL_FROM_SOURCE: '' } });
    if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}: ${run.stderr}`);
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return samples;
}

export async function coldStartScenario(ctx: BenchContext): Promise<void> {
  ensureBuilt();
  const runs = ctx.quick ? 5 : 15;
  const vigil = summary(timeRuns(['bin/vigil.js', '--version'], runs));
  const bare = summary(timeRuns(['-e', '0'], runs));
  const value = round(vigil.p50, 0);
  ctx.report.add('uws', {
    scenario: 'cli',
    figure: 'cold start, vigil --version p50',
    value,
    unit: 'ms',
    baseline: { name: 'node -e 0', value: round(bare.p50, 0), unit: 'ms' },
    ratio: round(vigil.p50 / bare.p50, 2),
    target: `< ${targetMs} ms`,
    met: value < targetMs,
  });
}
