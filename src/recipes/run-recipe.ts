// Runs a recipe for sequence.run (and temporal.fire's fallback) as the CLI
// does: a `vigil sequence` process of its own, so the run has its own signal
// handlers, step pool and process groups, and cancelling it is SIGTERM (the
// runner then kills every agent group and records "cancelled"). The runner
// tells which run it started on a pipe of its own (starter-link.ts), and
// cancels its run if this process dies; that run's output is output.txt,
// else the output of its last succeeded step.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type RunJson, readRunJson, runsDir } from './records/run-record.ts';
import { HELD_OUTPUT_BYTES, lastStepOutput, type RunOutput, readHeldOutput } from './tree/output.ts';
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

/** A finished run's output: output.txt, or, when its runner died before writing it, the output of its last succeeded step. */
export function runOutput(run: RunJson, dir: string): RunOutput {
  const file = join(dir, 'output.txt');
  return existsSync(file) ? readHeldOutput(file) : lastStepOutput(run, dir);
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
      const output = runOutput(found.run, found.dir);
      if (output.whole) {
        const mb = (statSync(output.whole.file).size / 1024 / 1024).toFixed(0);
        return reject(
          new VigilError('OUTPUT_TOO_LARGE', `sequence ${req.name}: run ${found.run.id} succeeded, but its output is ${mb} MB, more than sequence.run returns (${HELD_OUTPUT_BYTES / 1024 / 1024} MB): read it from ${output.whole.file}`, {
            ...details,
            output_file: output.whole.file,
          }),
        );
      }
      resolvePromise({ output: output.text, run_id: found.run.id });
    });
  });
}
