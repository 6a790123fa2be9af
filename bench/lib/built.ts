// The bench measures the server a user runs: the compiled dist/ that
// `npm install` (the `prepare` script) and `npm run build` leave, whose
// bundle (dist/bundle/) bin/vigil.js runs while it is at least as new as src/. Run through tsx
// instead, each function the server makes per request would also pay for
// esbuild's name-keeping helper, and a start would take seconds.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distIsCurrent } from '../../bin/dist-current.js';
import { log } from './report.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
let checked = false;

/** Builds dist/ when it is missing or older than src/ (once per bench run), by bin/vigil.js's rule. */
export function ensureBuilt(): void {
  if (checked) return;
  if (!distIsCurrent(root)) {
    log('dist/ is missing or older than src/: building it (npm run build), since the bench measures the built server');
    const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit', cwd: root });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
  checked = true;
}

/** The compiled CLI's entry, built first if need be. */
export function builtCli(): string {
  // Another build's entry (e.g. an older commit's dist/cli/main.js in a worktree of its own), for A/B runs.
  if (process.env.VIGIL_BENCH_CLI) return process.env.VIGIL_BENCH_CLI;
  ensureBuilt();
  // The bundle and dist/cli/main.js serve a lease request on the same CPU (68.8-77.1 against 70.6-72.8 µs,
  // interleaved at load 8-15); the bundle starts in a third less.
  return join(root, 'dist', 'bundle', 'main.js');
}
