// 10 cold start of the CLI: `vigil --version` as a user's shell runs it
// (node bin/vigil.js, a new process each time), against a bare `node -e 0`
// measured in the same run. The target (under 300 ms) holds for the built
// dist/ that `npm install` leaves (the `prepare` script); from the TypeScript
// sources through tsx a start takes seconds, so a stale dist/ is built first.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext } from '../lib/context.ts';
import { log } from '../lib/report.ts';
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

function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export async function coldStartScenario(ctx: BenchContext): Promise<void> {
  // bin/vigil.js runs dist/ only when it is at least as new as src/: the same rule here.
  if (!existsSync('dist/.built') || newestUnder('src') > statSync('dist/.built').mtimeMs) {
    log('cold start: dist/ is missing or older than src/, building it (npm run build)');
    const built = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
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
