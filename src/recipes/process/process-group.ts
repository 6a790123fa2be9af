// Runs one program in its own process group and supervises it: a wall-clock
// deadline, an inactivity limit and cancellation all kill the whole group
// (SIGTERM, then SIGKILL after a grace period). When the program exits on its
// own, whatever it left behind in its group is killed too. Piscina's own
// abort would only end the worker thread and orphan the group, so the runner
// never relies on it. Programs that leave the group (setsid) are found by
// process-tree.ts: their session, ancestry and VIGIL_SUPERVISOR marker. A
// watcher beside each group (guard-shell.ts) kills it when the runner dies,
// even by SIGKILL, so no agent outlives its runner.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { watchGroup } from './guard-shell.ts';
import { runMarkerPrefix, signalTree, supervisorVar, terminateTree, ticksSinceBoot } from './process-tree.ts';

export type KillReason = 'timeout' | 'inactivity' | 'cancel' | 'budget';

export interface Watchdog {
  /** Absolute time (ms since epoch) when the step's wall-clock budget ends. */
  deadline: number;
  /** Milliseconds without any output before the step counts as hung. */
  inactivityMs: number;
  /** Aborted when the run is cancelled. */
  signal: AbortSignal;
  /** Shared "last output" clock, so output of any phase keeps the step alive. */
  touch(): void;
  lastOutput(): number;
}

export interface SupervisedRun {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  stdin?: string;
  onOutput(chunk: Buffer, stream: 'stdout' | 'stderr'): void;
  onSpawn?(pid: number): void;
  onExit?(pid: number): void;
  graceMs?: number;
  /** Aborted when a budget is crossed: the group is killed at once (no grace), as `budget`. */
  budget?: AbortSignal;
}

export interface SupervisedResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  killedBy: KillReason | null;
  spawnError?: string;
}

export function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // the group is already gone
  }
}

export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM the group, SIGKILL it after `graceMs`; resolves once the group is gone or killed. */
export async function terminateGroup(pid: number, graceMs = 1000): Promise<void> {
  if (!killGroup(pid, 'SIGTERM')) return;
  const until = Date.now() + graceMs;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    if (!groupAlive(pid)) return;
  }
  killGroup(pid, 'SIGKILL');
}

export function runSupervised(run: SupervisedRun, watchdog: Watchdog): Promise<SupervisedResult> {
  return new Promise((resolvePromise) => {
    let killedBy: KillReason | null = null;
    let settled = false;
    const marker = `${runMarkerPrefix()}${randomBytes(6).toString('hex')}`;
    const bornAfter = ticksSinceBoot();
    const child = spawn(run.command, run.args, {
      cwd: run.cwd,
      env: { ...run.env, [supervisorVar]: marker },
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    const watcher = pid === undefined ? null : watchGroup(pid);
    const finish = (result: SupervisedResult): void => {
      if (settled) return;
      settled = true;
      clearInterval(timer);
      watchdog.signal.removeEventListener('abort', onAbort);
      run.budget?.removeEventListener('abort', onBudget);
      resolvePromise(result);
    };
    const kill = (reason: KillReason): void => {
      if (killedBy || pid === undefined) return;
      killedBy = reason;
      void terminateTree(pid, marker, reason === 'budget' ? 0 : (run.graceMs ?? 1000), bornAfter);
    };
    const onAbort = (): void => kill('cancel');
    const onBudget = (): void => kill('budget');
    const timer = setInterval(() => {
      const now = Date.now();
      if (now >= watchdog.deadline) kill('timeout');
      else if (now - watchdog.lastOutput() >= watchdog.inactivityMs) kill('inactivity');
    }, 100);
    child.on('error', (error) => {
      finish({ exitCode: null, signal: null, killedBy, spawnError: `cannot start ${run.command}: ${error.message}` });
    });
    if (pid === undefined) return;
    run.onSpawn?.(pid);
    if (run.budget?.aborted) kill('budget');
    else if (watchdog.signal.aborted) kill('cancel');
    watchdog.signal.addEventListener('abort', onAbort);
    run.budget?.addEventListener('abort', onBudget);
    child.stdout.on('data', (chunk: Buffer) => {
      watchdog.touch();
      run.onOutput(chunk, 'stdout');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      watchdog.touch();
      run.onOutput(chunk, 'stderr');
    });
    child.stdin.on('error', () => {}); // the agent may exit without reading its prompt
    child.stdin.end(run.stdin ?? '');
    child.on('exit', (code, signal) => {
      // Whatever the program left running goes with it: its group, and what left the group.
      signalTree(pid, marker, 'SIGKILL', false, bornAfter);
      watcher?.stop();
      run.onExit?.(pid);
      // Let the pipes drain; the group is dead, so they close promptly.
      const done = () => finish({ exitCode: code, signal, killedBy });
      const pending = [child.stdout, child.stderr].filter((s) => !s.readableEnded);
      if (pending.length === 0) return done();
      let open = pending.length;
      for (const s of pending)
        s.once('end', () => {
          open -= 1;
          if (open === 0) done();
        });
      setTimeout(done, 500).unref();
    });
  });
}

export function createWatchdog(timeoutMs: number, inactivityMs: number, signal: AbortSignal, now = Date.now()): Watchdog {
  let last = now;
  return {
    deadline: now + timeoutMs,
    inactivityMs,
    signal,
    touch: () => {
      last = Date.now();
    },
    lastOutput: () => last,
  };
}
