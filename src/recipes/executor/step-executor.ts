// Runs a plan: starts each step once every step it needs has succeeded,
// marks the dependents of a failed step skipped, keeps steps of one
// exclusive group that are not concurrencySafe one at a time, and stops
// starting steps once the run is cancelled. It knows nothing of backends,
// isolation or gates: `runStep` does the work of one step.
import type { Plan, PlannedStep } from '../planning/plan.ts';
import type { StepStatus } from '../records/run-record.ts';
import { stoppedWhy } from '../tree/run-abort.ts';

/** `skipped` here: the step's `if:` was false (its dependents go on, as after a success). */
export type FinalStatus = Extract<StepStatus, 'succeeded' | 'failed' | 'killed' | 'conflict' | 'cancelled' | 'skipped'>;

export interface ExecutorHooks {
  /** Runs one step to its end; resolves with its final status. */
  runStep(step: PlannedStep, signal: AbortSignal): Promise<FinalStatus>;
  /** A step that will not run: a dependency did not succeed, or the run was cancelled first. */
  notRun(step: PlannedStep, status: 'skipped' | 'cancelled', reason: string): void;
  /** True for a step to start once its needs have ended, whether or not they succeeded (an `if:` with always() or failure()). */
  runsRegardless?(step: PlannedStep): boolean;
}

export interface ExecutionResult {
  statuses: Map<string, StepStatus>;
  ok: boolean;
  cancelled: boolean;
}

const DONE_OK = new Set<StepStatus>(['succeeded', 'reused']);

export function executePlan(
  plan: Plan,
  hooks: ExecutorHooks,
  signal: AbortSignal,
  preset: Map<string, StepStatus> = new Map(),
): Promise<ExecutionResult> {
  const statuses = new Map<string, StepStatus>();
  for (const s of plan.steps) statuses.set(s.label, preset.get(s.label) ?? 'pending');
  // Steps that let their dependents go on without succeeding: an `if:` that was false, or continue_on_error.
  const passed = new Set<string>();
  const passes = (label: string): boolean => DONE_OK.has(statuses.get(label) ?? 'pending') || passed.has(label);
  const busyGroups = new Set<string>();
  let running = 0;

  return new Promise((resolvePromise) => {
    const finish = (): void => {
      const ok = plan.steps.every((s) => passes(s.label));
      resolvePromise({ statuses, ok, cancelled: signal.aborted });
    };

    const pump = (): void => {
      if (signal.aborted) {
        for (const s of plan.steps) {
          if (statuses.get(s.label) === 'pending') {
            statuses.set(s.label, 'cancelled');
            hooks.notRun(s, 'cancelled', `not started: ${stoppedWhy(signal)}`);
          }
        }
      }
      let progressed = true;
      while (progressed) {
        progressed = false;
        for (const s of plan.steps) {
          if (statuses.get(s.label) !== 'pending') continue;
          const finished = (n: string): boolean => {
            const st = statuses.get(n);
            return st !== undefined && st !== 'pending' && st !== 'running';
          };
          // A step whose `if:` asks always() or failure() runs once what it waits for has ended, however it ended.
          const regardless = hooks.runsRegardless?.(s) === true;
          const blocker = regardless ? undefined : s.needs.find((n) => finished(n) && !passes(n));
          if (blocker) {
            statuses.set(s.label, 'skipped');
            hooks.notRun(s, 'skipped', `"${blocker}" did not succeed (${statuses.get(blocker)})`);
            progressed = true;
            continue;
          }
          if (!s.needs.every((n) => (regardless ? finished(n) : passes(n)))) continue;
          const exclusive = s.step.concurrencySafe !== true && s.exclusiveGroup !== null;
          if (exclusive && busyGroups.has(s.exclusiveGroup!)) continue;
          if (exclusive) busyGroups.add(s.exclusiveGroup!);
          statuses.set(s.label, 'running');
          running += 1;
          hooks
            .runStep(s, signal)
            .catch((): FinalStatus => 'failed')
            .then((status) => {
              statuses.set(s.label, status);
              if (status === 'skipped' || (s.step.continue_on_error === true && (status === 'failed' || status === 'killed'))) passed.add(s.label);
              running -= 1;
              if (exclusive) busyGroups.delete(s.exclusiveGroup!);
              pump();
            });
        }
      }
      if (running === 0) finish();
    };
    signal.addEventListener('abort', () => pump(), { once: true });
    pump();
  });
}
