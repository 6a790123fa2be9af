// A parallel recipe of 100 children × 1 trivial custom-backend step against
// the same 100 steps as one plain sequence (all in one wave), and against the
// agent programs started directly with the same concurrency (the baseline).
// Prints the runner's peak RSS and the orchestration overhead per step:
// (wall time of the run − wall time of the baseline) / steps. Indicative
// only: the machine is shared.
//   npx tsx bench/recipes-wide.ts [--children 100] [--fanout 64] [--sleep 0]
// --sleep 1: each agent takes 1 s, as in the wideRecipe scenario of bench/scenarios/recipes.ts.
import { readFileSync, rmSync } from 'node:fs';
import { agentsAlone, cliStart, recipeProject, runSequence } from './lib/recipe-run.ts';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const children = arg('children', 100);
const fanout = Math.min(64, arg('fanout', 64));
const sleep = arg('sleep', 0);

const root = recipeProject(children, fanout, sleep > 0 ? `sleep ${sleep}\necho ok` : 'echo ok');
try {
  const start = await cliStart(root);
  const base = await agentsAlone(root, children, fanout);
  const single = await runSequence(root, 'one');
  const wide = await runSequence(root, 'wide');
  const flat = await runSequence(root, 'flat');
  const per = (ms: number) => (ms - base - start) / children;
  // The runner's own CPU per step, beyond what a one-step run costs: what the load on the machine does not inflate.
  const cpuPer = (cpu: number) => (cpu - single.cpu) / children;
  const rows = [
    ['agents alone (baseline)', `${base.toFixed(0)} ms`, '-', '-'],
    ['one recipe of 1 step (RSS baseline)', `${single.ms.toFixed(0)} ms`, `${single.peakMb.toFixed(0)} MB`, '-', `${single.cpu} ms total`],
    [`parallel ${children} children × 1 step, fanout ${fanout}`, `${wide.ms.toFixed(0)} ms`, `${wide.peakMb.toFixed(0)} MB`, `${per(wide.ms).toFixed(1)} ms`, `${cpuPer(wide.cpu).toFixed(1)} ms`],
    [`sequence of ${children} steps in one wave`, `${flat.ms.toFixed(0)} ms`, `${flat.peakMb.toFixed(0)} MB`, `${per(flat.ms).toFixed(1)} ms`, `${cpuPer(flat.cpu).toFixed(1)} ms`],
  ];
  process.stdout.write(`CLI start (vigil recipe list): ${start.toFixed(0)} ms, subtracted from both runs\n`);
  process.stdout.write(`${'run'.padEnd(46)} ${'wall'.padStart(9)} ${'peak RSS'.padStart(9)} ${'overhead/step'.padStart(14)} ${'runner CPU/step'.padStart(16)}\n`);
  for (const r of rows) process.stdout.write(`${r[0]!.padEnd(46)} ${r[1]!.padStart(9)} ${r[2]!.padStart(9)} ${r[3]!.padStart(14)} ${(r[4] ?? '-').padStart(16)}\n`);
  process.stdout.write(`load average now: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} on ${(await import('node:os')).cpus().length} cores\n`);
  process.stdout.write(`parallel / sequence: wall ×${(wide.ms / flat.ms).toFixed(2)}, RSS ×${(wide.peakMb / flat.peakMb).toFixed(2)} (goals: RSS < 250 MB, overhead < 20 ms/step; indicative, shared machine)\n`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
