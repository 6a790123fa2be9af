// Runs a plan: starts each step once every step it needs has succeeded,
// marks the dependents of a failed step skipped, keeps steps of one
// exclusive group that are not concurrencySafe one at a time, and stops
// starting steps once the run is cancelled. It knows nothing of backends,
// isolation or gates: `runStep` does the work of one step.
import type { Plan, PlannedStep } from '../planning/plan.ts';
import type { StepStatus } from '../records/run-record.ts';

export type FinalStatus = Extract<StepStatus, 'succeeded' | 'failed' | 'killed' | 'conflict' | 'cancelled'>;

export interface ExecutorHooks {
  /** Runs one step to its end; resolves with its final status. */
  runStep(step: PlannedStep, signal: AbortSignal): Promise<FinalStatus>;
  /** A step that will not run: a dependency did not succeed, or the run was cancelled first. */
  notRun(step: PlannedStep, status: 'skipped' | 'cancelled', reason: string): void;
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
  const busyGroups = new Set<string>();
  let running = 0;

  return new Promise((resolvePromise) => {
    const finish = (): void => {
      const ok = [...statuses.values()].every((s) => DONE_OK.has(s));
      resolvePromise({ statuses, ok, cancelled: signal.aborted });
    };

    const pump = (): void => {
      if (signal.aborted) {
        for (const s of plan.steps) {
          if (statuses.get(s.label) === 'pending') {
            statuses.set(s.label, 'cancelled');
            hooks.notRun(s, 'cancelled', 'not started: the run was cancelled');
          }
        }
      }
      let progressed = true;
      while (progressed) {
        progressed = false;
        for (const s of plan.steps) {
          if (statuses.get(s.label) !== 'pending') continue;
          const blocker = s.needs.find((n) => {
            const st = statuses.get(n);
            return st !== undefined && st !== 'pending' && st !== 'running' && !DONE_OK.has(st);
          });
          if (blocker) {
            statuses.set(s.label, 'skipped');
            hooks.notRun(s, 'skipped', `"${blocker}" did not succeed (${statuses.get(blocker)})`);
            progressed = true;
            continue;
          }
          if (!s.needs.every((n) => DONE_OK.has(statuses.get(n) ?? 'pending'))) continue;
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
