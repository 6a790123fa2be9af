// A parallel recipe of 100 children × 1 trivial custom-backend step against
// the same 100 steps as one plain sequence (all in one wave), and against the
// agent programs started directly with the same concurrency (the baseline).
// Prints the runner's peak RSS and the orchestration overhead per step:
// (wall time of the run − wall time of the baseline) / steps. Indicative
// only: the machine is shared.
//   npx tsx bench/recipes-wide.ts [--children 100] [--fanout 64]
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const children = arg('children', 100);
const fanout = Math.min(64, arg('fanout', 64));
const cli = resolve(fileURLToPath(import.meta.url), '..', '..', 'bin', 'vigil.js');

function project(): string {
  const root = mkdtempSync(join(tmpdir(), 'vigil-bench-recipes-'));
  mkdirSync(join(root, '.vigil', 'recipes'), { recursive: true });
  const agent = join(root, 'agent.sh');
  writeFileSync(agent, '#!/bin/sh\necho ok\n');
  chmodSync(agent, 0o755);
  writeFileSync(join(root, 'vigil.yml'), `providers:\n  sh: { type: custom, command: ${agent} }\ndefault_backend: sh\n`);
  const recipe = (doc: object) => writeFileSync(join(root, '.vigil', 'recipes', `${(doc as { name: string }).name}.json`), JSON.stringify(doc));
  recipe({ name: 'one', canary: false, steps: [{ label: 'work', args: ['x'] }] });
  recipe({
    name: 'wide',
    type: 'parallel',
    recipe: 'one',
    fanout,
    transfer_mode: 'none',
    vars: Array.from({ length: children }, (_, i) => ({ I: String(i) })),
  });
  recipe({
    name: 'flat',
    canary: false,
    steps: Array.from({ length: children }, (_, i) => ({ label: `s${i}`, args: ['x'], wave: 1, concurrencySafe: true })),
  });
  return root;
}

function rssKb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** CPU time (user + system, ms) the process used so far, from /proc (100 ticks a second). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

async function runVigil(root: string, name: string): Promise<{ ms: number; peakMb: number; cpu: number; code: number | null }> {
  const started = performance.now();
  const child = spawn(process.execPath, [cli, 'sequence', name], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  let peak = 0;
  let cpu = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKb(child.pid!));
    cpu = Math.max(cpu, cpuMs(child.pid!));
  }, 20);
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  clearInterval(timer);
  if (code !== 0) throw new Error(`vigil sequence ${name} exited ${code}: ${err}`);
  return { ms: performance.now() - started, peakMb: peak / 1024, cpu, code };
}

/** The agents alone: `children` runs of the agent, `limit` at a time. */
async function baseline(root: string, limit: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < children) {
      next += 1;
      await new Promise((r) => spawn(join(root, 'agent.sh'), ['x'], { stdio: 'ignore', detached: true }).on('exit', r));
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
  return performance.now() - started;
}

async function startup(root: string): Promise<number> {
  const started = performance.now();
  await new Promise((r) => spawn(process.execPath, [cli, 'recipe', 'list'], { cwd: root, stdio: 'ignore' }).on('exit', r));
  return performance.now() - started;
}

const root = project();
try {
  const start = await startup(root);
  const base = await baseline(root, fanout);
  const single = await runVigil(root, 'one');
  const wide = await runVigil(root, 'wide');
  const flat = await runVigil(root, 'flat');
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
