// A throwaway project with a custom-backend agent script, and the runs the
// recipe benchmarks time: `vigil sequence <name>` as a user starts it (peak
// RSS and CPU read from /proc while it runs), the agents alone at the same
// concurrency (the baseline), and the CLI's own start.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = resolve(fileURLToPath(import.meta.url), '..', '..', '..', 'bin', 'vigil.js');

/** Recipes `one` (one step), `wide` (parallel, `children` × one) and `flat` (the same steps as one wave). */
export function recipeProject(children: number, fanout: number, agentBody = 'echo ok'): string {
  const root = mkdtempSync(join(tmpdir(), 'vigil-bench-recipes-'));
  mkdirSync(join(root, '.vigil', 'recipes'), { recursive: true });
  const agent = join(root, 'agent.sh');
  writeFileSync(agent, `#!/bin/sh\n${agentBody}\n`);
  chmodSync(agent, 0o755);
  writeFileSync(join(root, 'vigil.yml'), `providers:\n  sh: { type: custom, command: ${agent} }\ndefault_backend: sh\n`);
  const recipe = (doc: { name: string }) => writeFileSync(join(root, '.vigil', 'recipes', `${doc.name}.json`), JSON.stringify(doc));
  recipe({ name: 'one', canary: false, steps: [{ label: 'work', args: ['x'] }] } as { name: string });
  recipe({ name: 'wide', type: 'parallel', recipe: 'one', fanout, transfer_mode: 'none', vars: Array.from({ length: children }, (_, i) => ({ I: String(i) })) } as { name: string });
  recipe({ name: 'flat', canary: false, steps: Array.from({ length: children }, (_, i) => ({ label: `s${i}`, args: ['x'], wave: 1, concurrencySafe: true })) } as { name: string });
  return root;
}

function peakRssKb(pid: number): number {
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

export interface RecipeRun {
  ms: number;
  peakMb: number;
  cpu: number;
}

export async function runSequence(root: string, name: string): Promise<RecipeRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [cli, 'sequence', name], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  let peak = 0;
  let cpu = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, peakRssKb(child.pid!));
    cpu = Math.max(cpu, cpuMs(child.pid!));
  }, 20);
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  clearInterval(timer);
  if (code !== 0) throw new Error(`vigil sequence ${name} exited ${code}: ${err.slice(-2000)}`);
  return { ms: performance.now() - started, peakMb: peak / 1024, cpu };
}

/** The agents alone: `count` runs of the project's agent, `limit` at a time. */
export async function agentsAlone(root: string, count: number, limit: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      next += 1;
      await new Promise((r) => spawn(join(root, 'agent.sh'), ['x'], { stdio: 'ignore', detached: true }).on('exit', r));
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
  return performance.now() - started;
}

/** How long the CLI takes to start and do nothing much (`vigil recipe list`). */
export async function cliStart(root: string): Promise<number> {
  const started = performance.now();
  await new Promise((r) => spawn(process.execPath, [cli, 'recipe', 'list'], { cwd: root, stdio: 'ignore' }).on('exit', r));
  return performance.now() - started;
}
