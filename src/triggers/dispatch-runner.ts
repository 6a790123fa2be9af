// The daemon's share of dispatch (recipes-and-sdk.md §5): jobs queued by
// `sdk.dispatch.send` or `vigil dispatch send` are run by a `vigil dispatch
// run` child, one child at a time. A child rather than in-process, because
// plugin tools run synchronously and would stall the daemon's schedules and
// sentinels for as long as a tool takes. Claiming a job is atomic in the
// store, so a `send --wait` racing the daemon never runs a job twice.
import { type ChildProcess, spawn } from 'node:child_process';
import { queuedJobIds } from '../dispatch/jobs.ts';
import { vigilEntry } from '../paths/self-entry.ts';

export interface DispatchRunner {
  stop(): Promise<void>;
}

export function startDispatchRunner(projectRoot: string, env: NodeJS.ProcessEnv, log: (line: string) => void, everyMs = 1000): DispatchRunner {
  let child: ChildProcess | null = null;
  const check = () => {
    if (child) return;
    let queued: number;
    try {
      queued = queuedJobIds(projectRoot).length;
    } catch (error) {
      log(`dispatch: cannot read the job queue: ${(error as Error).message}`);
      return;
    }
    if (queued === 0) return;
    log(`dispatch: running ${queued} queued job(s)`);
    const started = spawn(process.execPath, [vigilEntry, 'dispatch', 'run'], { cwd: projectRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
    child = started;
    let stderr = '';
    started.stderr?.on('data', (b: Buffer) => {
      if (stderr.length < 4000) stderr += b.toString('utf8');
    });
    started.on('error', (error) => log(`dispatch: cannot start "vigil dispatch run": ${error.message}`));
    started.on('close', (code) => {
      if (code !== 0) log(`dispatch: "vigil dispatch run" exited with ${code}: ${stderr.trim().slice(-500)}`);
      child = null;
    });
  };
  const timer = setInterval(check, everyMs);
  check();
  return {
    async stop() {
      clearInterval(timer);
      const running = child;
      if (!running) return;
      // A job already claimed finishes; the daemon's stop waits for it rather than leave it 'running'.
      await new Promise<void>((done) => running.once('close', () => done()));
    },
  };
}
