// Runs a recipe for sequence.run (and temporal.fire's fallback) as the CLI
// does: a `vigil sequence` process of its own, so the run has its own signal
// handlers, step pool and process groups, and cancelling it is SIGTERM (the
// runner then kills every agent group and records "cancelled"). The run is
// found by the pid in its run.json; its output is output.txt, else the output
// of its last succeeded step.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { confined } from '../workspace/confine.ts';
import { fileURLToPath } from 'node:url';
import { type RunJson, readRunJson, runsDir } from './records/run-record.ts';
import { VigilError } from '../errors/vigil-error.ts';

export const RUN_TIMEOUT_MS = 600_000;
const cliEntry = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'vigil.js');

export interface RecipeRunRequest {
  name: string;
  args: string[];
  cwd: string;
  projectRoot: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  timeoutMs?: number;
  /** Where the runner's own progress lines go (never the script's stdout). */
  progress?: NodeJS.WritableStream;
}

function runOf(projectRoot: string, pid: number): { run: RunJson; dir: string } | null {
  const root = runsDir(projectRoot);
  if (!existsSync(root)) return null;
  for (const id of readdirSync(root).sort().reverse()) {
    try {
      const run = readRunJson(join(root, id));
      if (run.pid === pid && !run.role) return { run, dir: join(root, id) };
    } catch {
      // a run being written
    }
  }
  return null;
}

export function runOutput(run: RunJson, dir: string): string {
  const file = join(dir, 'output.txt');
  if (existsSync(file)) return readFileSync(file, 'utf8');
  const done = run.steps.filter((s) => s.status === 'succeeded' && s.ended).sort((a, b) => (a.ended! < b.ended! ? -1 : 1));
  const last = done.at(-1);
  if (!last) return '';
  if (last.output_file) return readFileSync(confined(dir, last.output_file, 'output_file', 'the run folder'), 'utf8');
  return last.output ?? '';
}

export function runRecipe(req: RecipeRunRequest): Promise<{ output: string; run_id: string | null }> {
  const timeoutMs = req.timeoutMs ?? RUN_TIMEOUT_MS;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cliEntry, 'sequence', req.name, ...req.args], { cwd: req.cwd, env: req.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (c: Buffer): void => {
      req.progress?.write(c);
      tail = (tail + c.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let stopped: 'timeout' | 'aborted' | null = null;
    const stop = (why: 'timeout' | 'aborted'): void => {
      if (stopped || child.exitCode !== null) return;
      stopped = why;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    const onAbort = (): void => stop('aborted');
    req.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => reject(new VigilError('SEQUENCE_FAILED', `sequence ${req.name}: cannot start the runner: ${error.message}`)));
    child.on('close', (code) => {
      clearTimeout(timer);
      req.signal.removeEventListener('abort', onAbort);
      const found = child.pid ? runOf(req.projectRoot, child.pid) : null;
      const details = { name: req.name, run_id: found?.run.id ?? null, status: found?.run.status ?? null, exit_code: code };
      if (stopped === 'timeout') return reject(new VigilError('TIMEOUT', `sequence ${req.name} ran longer than ${timeoutMs} ms and was cancelled`, details));
      if (stopped === 'aborted') return reject(new VigilError('TIMEOUT', `sequence ${req.name} was cancelled: the script stopped`, details));
      if (code !== 0 || !found) {
        const last = tail.trim().split('\n').slice(-3).join(' | ');
        return reject(new VigilError('SEQUENCE_FAILED', `sequence ${req.name} ${found ? found.run.status : 'failed'} (exit ${code}): ${last}`, details));
      }
      resolvePromise({ output: runOutput(found.run, found.dir), run_id: found.run.id });
    });
  });
}
