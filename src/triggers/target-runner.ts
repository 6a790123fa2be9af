// Runs the target of a firing or reaction: a shell line (`command`), `vigil
// script run` (`script`) or `vigil sequence` (`recipe`), in its own process
// group under a guard shell (src/recipes/process/guard-shell.ts) that kills
// the group when the daemon dies (its stdin pipe closes), so a SIGKILLed
// daemon leaves no reaction running that its restart would repeat. `ttl` kills the group (SIGTERM, then SIGKILL).
// Trigger variables are data (src/recipes/outside-vars.ts): a command target
// gets in its environment only those the recipe declares in its `vars` (and
// Vigil's own), never one that changes how programs start; a recipe target
// gets them as `--data-var`. A target fenced by a lease (a sentinel's
// reaction) is also killed by its guard when the lease's time runs out: each
// line the runner writes to the guard is the seconds the target may still
// run, and a guard that hears of no renewal in that time stops the group
// (SIGTERM, then SIGKILL) by itself, even while the runner is stopped.
import { spawn } from 'node:child_process';
import { targetGuard } from '../recipes/process/guard-shell.ts';
import { dataVarFlags, declaredBy, environmentOf } from '../recipes/outside-vars.ts';
import { describeFinding, scanShell } from '../recipes/preflight/destructive.ts';
import type { TriggerMode } from '../recipes/types.ts';
import type { Clock } from './clock.ts';
import { vigilEntry } from '../paths/self-entry.ts';
import { OutputBytes } from '../text/output-bytes.ts';

const MAX_OUTPUT = 1024 * 1024;

export interface TargetSpec {
  mode: TriggerMode;
  target: string;
  /** The recipe's own variables (its `vars`). */
  vars: Record<string, string>;
  /** Variables from outside: a sentinel's trigger variables (they override the recipe's). */
  outside?: Record<string, string>;
  /** The environment of the target process. */
  env: Record<string, string | undefined>;
  cwd: string;
  ttlSeconds: number;
  /** A command target the destructive-intent guard refuses runs only when the recipe allows it. */
  allowDestructive?: boolean;
  /** The lease the target runs under: it is stopped when the lease is lost or runs out. */
  fence?: TargetFence;
  /** Aborted to stop the target from outside (`temporal fire` stopped by Ctrl-C), the reason saying by what. */
  stop?: AbortSignal;
}

export interface TargetFence {
  readonly signal: AbortSignal;
  /** Seconds the target may still run. */
  secondsLeft(): number;
  onRenewed(listener: (secondsLeft: number) => void): void;
  /** True once the lease is lost or has run out; `lostReason` says why. */
  lost(): boolean;
  readonly lostReason: string | null;
}

export interface TargetResult {
  status: 'succeeded' | 'failed' | 'ttl_expired' | 'fenced';
  exitCode: number | null;
  output: string;
  stderr: string;
  reason?: string;
}

const varFlags = (vars: Record<string, string>) => Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}=${v}`]);

export function targetCommand(spec: TargetSpec): string[] {
  if (spec.mode === 'command') return ['sh', '-c', spec.target];
  // A script reads its variables as data (sdk.vars) whatever their origin.
  if (spec.mode === 'script') return [process.execPath, vigilEntry, 'script', 'run', spec.target, ...varFlags({ ...spec.vars, ...spec.outside })];
  const outside = spec.outside ?? {};
  const own = Object.fromEntries(Object.entries(spec.vars).filter(([k]) => !Object.hasOwn(outside, k)));
  return [process.execPath, vigilEntry, 'sequence', spec.target, ...varFlags(own), ...dataVarFlags(outside)];
}

/** A command target's environment: the daemon's and the recipe's, then the variables it may take (outside-vars.ts). */
export function commandEnv(spec: TargetSpec): Record<string, string | undefined> {
  const outside = spec.outside ?? {};
  const { env } = environmentOf({ ...spec.vars, ...outside }, { outside, declared: declaredBy({ vars: spec.vars }) });
  return { ...spec.env, ...env };
}

function definedValues(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

export function runTarget(spec: TargetSpec, clock: Clock, onSpawn?: (pid: number) => void): Promise<TargetResult> {
  // Recipe targets pass the guard in their own run's preflight; a command target is read here.
  if (spec.mode === 'command' && !spec.allowDestructive) {
    const findings = scanShell(spec.target, 'target', definedValues(commandEnv(spec)));
    if (findings.length > 0) {
      const reason = `refused: destructive intent (${findings.map(describeFinding).join('; ')}); set "allow_destructive_intents": true in the recipe to run it`;
      return Promise.resolve({ status: 'failed', exitCode: null, output: '', stderr: '', reason });
    }
  }
  const argv = targetCommand(spec);
  const env = spec.mode === 'command' ? commandEnv(spec) : spec.env;
  return new Promise((done) => {
    const child = spawn('sh', ['-c', targetGuard, 'vigil-guard', ...argv], { cwd: spec.cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = new OutputBytes(MAX_OUTPUT);
    const err = new OutputBytes(MAX_OUTPUT);
    child.stdout.on('data', (b: Buffer) => out.add(b));
    child.stderr.on('data', (b: Buffer) => err.add(b));
    child.stdin.on('error', () => {}); // the guard is gone; its exit reports why
    let expired = false;
    let killTimer: unknown;
    const ttlTimer = clock.setTimeout(() => {
      expired = true;
      stopGroup();
    }, spec.ttlSeconds * 1000);
    if (child.pid) onSpawn?.(child.pid);
    const fence = spec.fence;
    const stopGroup = (): void => {
      if (child.pid) killGroup(child.pid, 'SIGTERM');
      killTimer ??= clock.setTimeout(() => child.pid && killGroup(child.pid, 'SIGKILL'), 2000);
    };
    if (fence) {
      const tell = (seconds: number): void => {
        if (!child.stdin.destroyed) child.stdin.write(`${seconds.toFixed(3)}\n`);
      };
      tell(fence.secondsLeft());
      fence.onRenewed(tell);
      if (fence.signal.aborted) stopGroup();
      else fence.signal.addEventListener('abort', stopGroup, { once: true });
    }
    // SIGTERM first, as for a ttl: a recipe target's runner then cancels its run and records it.
    if (spec.stop?.aborted) stopGroup();
    else spec.stop?.addEventListener('abort', stopGroup, { once: true });
    child.on('error', (error) => {
      clock.clearTimeout(ttlTimer);
      done({ status: 'failed', exitCode: null, output: '', stderr: '', reason: `cannot start: ${error.message}` });
    });
    child.on('close', (code, signal) => {
      clock.clearTimeout(ttlTimer);
      clock.clearTimeout(killTimer);
      if (child.pid) killGroup(child.pid, 'SIGKILL'); // whatever the target left behind in its group
      const output = out.text();
      const stderr = err.text();
      fence?.signal.removeEventListener('abort', stopGroup);
      spec.stop?.removeEventListener('abort', stopGroup);
      if (fence?.lost()) done({ status: 'fenced', exitCode: code, output, stderr, reason: `fenced: ${fence.lostReason}; its process group was stopped` });
      else if (expired) done({ status: 'ttl_expired', exitCode: code, output, stderr, reason: `killed after its ttl of ${spec.ttlSeconds} s` });
      else if (spec.stop?.aborted) done({ status: 'failed', exitCode: code, output, stderr, reason: `stopped by ${String(spec.stop.reason)}` });
      else if (code === 0) done({ status: 'succeeded', exitCode: 0, output, stderr });
      else done({ status: 'failed', exitCode: code, output, stderr, reason: signal ? `killed by ${signal}` : `exited with ${code}` });
    });
  });
}
