// Cost of one synchronous SDK call from a script (`vigil script run`, calls
// answered in-process through isolated-vm) against the same operation done
// the way the seed describes it, a child process per call (`execFileSync` of
// the CLI command). One run, one temporary project; figures are indicative
// (the machine is shared).
//
//   npx tsx bench/sdk-calls.ts [--batches 25] [--batch 200] [--cli-runs 5]
//
// The sandbox has no sub-millisecond clock, so the script times batches of
// calls with Date.now(); per-call figures are batch time / batch size, and
// p50/p99 are taken over the batches.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { nowMs, round, summary } from './lib/stats.ts';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const batches = arg('batches', 25);
const batch = arg('batch', 200);
const cliRuns = arg('cli-runs', 5);

const cli = resolve(import.meta.dirname, '..', 'bin', 'vigil.js');
const root = mkdtempSync(join(tmpdir(), 'vigil-bench-sdk-'));
const env = { ...process.env, HOME: join(root, 'home'), VIGIL_HOME: join(root, 'home', '.vigil') };
const vigil = (args: string[], input?: string): string => execFileSync(process.execPath, [cli, ...args], { cwd: root, env, encoding: 'utf8', input });

try {
  mkdirSync(join(root, '.vigil', 'scripts'), { recursive: true });
  vigil(['vault', 'set', 'bench_key', '--json'], 'bench-value');
  for (let i = 0; i < 50; i += 1) vigil(['cir', 'capture', `bench signal ${i}`, '--type', 'bench']);

  const calls = {
    // No command prints one variable; the nearest is a process that runs a script returning it.
    vars: { script: 'sdk.vars.NAME', cli: ['script', 'run', 'one-var', '--var', 'NAME=x'] as string[] | null },
    'vault.get': { script: "sdk.vault.get('bench_key')", cli: ['vault', 'get', 'bench_key'] },
    'cir.query': { script: "sdk.cir.query({ type: 'bench', limit: 10 })", cli: ['cir', 'query', '--type', 'bench', '--limit', '10', '--json'] },
  };
  writeFileSync(
    join(root, '.vigil', 'scripts', 'bench.js'),
    `const out = {};
const calls = { vars: () => sdk.vars.NAME, 'vault.get': () => sdk.vault.get('bench_key'), 'cir.query': () => sdk.cir.query({ type: 'bench', limit: 10 }) };
for (const [name, call] of Object.entries(calls)) {
  for (let i = 0; i < 50; i += 1) call();
  const per = [];
  // Reading a frozen object costs nanoseconds: its batches are 1000 times larger to show on a 1 ms clock.
  const size = name === 'vars' ? ${batch} * 1000 : ${batch};
  let sink = 0;
  for (let b = 0; b < ${batches}; b += 1) {
    const t0 = Date.now();
    for (let i = 0; i < size; i += 1) sink += call() === null ? 0 : 1;
    per.push((Date.now() - t0) / size);
  }
  if (sink < 0) throw new Error('unreachable');
  out[name] = per;
}
return out;`,
  );
  writeFileSync(join(root, '.vigil', 'scripts', 'one-var.js'), 'return sdk.vars.NAME;');
  const started = nowMs();
  const lines = vigil(['script', 'run', 'bench', '--var', 'NAME=x']).trimEnd().split('\n');
  const scriptMs = nowMs() - started;
  const inScript = JSON.parse(lines.at(-1)!) as Record<string, number[]>;

  const rows: Array<Record<string, unknown>> = [];
  for (const [name, c] of Object.entries(calls)) {
    const s = summary(inScript[name]!);
    let cliP50: number | null = null;
    if (c.cli) {
      const samples: number[] = [];
      for (let i = 0; i < cliRuns; i += 1) {
        const t0 = nowMs();
        vigil(c.cli);
        samples.push(nowMs() - t0);
      }
      cliP50 = summary(samples).p50;
    }
    rows.push({
      call: name,
      'script p50 ms/call': round(s.p50, 6),
      'script p99 ms/call': round(s.p99, 6),
      'execFileSync p50 ms': cliP50 === null ? '(no CLI: a value)' : round(cliP50, 1),
      'times cheaper': cliP50 === null ? '-' : s.p50 > 0 ? round(cliP50 / s.p50, 0) : `> ${round(cliP50 * batch * (name === 'vars' ? 1000 : 1), 0)} (batches under the 1 ms clock)`,
    });
  }
  console.log(`SDK call cost: ${batches} batches of ${batch} calls per row in one script run (${round(scriptMs)} ms in all, including start); CLI baseline: ${cliRuns} execFileSync runs each. Indicative: shared machine, load ${(await import('node:os')).loadavg()[0]!.toFixed(1)}.`);
  console.table(rows);
} finally {
  rmSync(root, { recursive: true, force: true });
}
