// Runs a recipe for sequence.run (and temporal.fire's fallback) as the CLI
// does: a `vigil sequence` process of its own, so the run has its own signal
// handlers, step pool and process groups, and cancelling it is SIGTERM (the
// runner then kills every agent group and records "cancelled"). The runner
// tells which run it started on a pipe of its own (starter-link.ts), and
// cancels its run if this process dies; that run's output is output.txt,
// else the output of its last succeeded step.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { confined } from '../workspace/confine.ts';
import { type RunJson, readRunJson, runsDir } from './records/run-record.ts';
import { VigilError } from '../errors/vigil-error.ts';
import { RUN_ID_FD, RUN_ID_FD_ENV, reportedRunId } from './starter-link.ts';
import { vigilEntry } from '../paths/self-entry.ts';

export const RUN_TIMEOUT_MS = 600_000;

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

/** The run the runner reported, once it has ended (null: it reported none, or its record cannot be read). */
function runOf(projectRoot: string, runId: string | null): { run: RunJson; dir: string } | null {
  if (!runId) return null;
  const dir = join(runsDir(projectRoot), runId);
  try {
    return { run: readRunJson(dir), dir };
  } catch {
    return null;
  }
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
    const child = spawn(process.execPath, [vigilEntry, 'sequence', req.name, ...req.args], {
      cwd: req.cwd,
      env: { ...req.env, [RUN_ID_FD_ENV]: String(RUN_ID_FD) },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let report = '';
    child.stdio[RUN_ID_FD]?.on('data', (c: Buffer) => {
      report += c.toString();
    });
    let tail = '';
    const keep = (c: Buffer): void => {
      req.progress?.write(c);
      tail = (tail + c.toString()).slice(-4000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
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
      const found = runOf(req.projectRoot, reportedRunId(report));
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
