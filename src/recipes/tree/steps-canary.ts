// A steps node's canary: before its first step, one minimal call to each
// distinct backend the steps to run use (canary.ts), at most once per
// backend in the whole tree. A failed canary skips every step; a cancel
// while it runs cancels them.
import { canaryTargets, runCanary } from '../canary.ts';
import { agentStatePaths, childEnv } from '../executor/run-step.ts';
import type { PlannedStep } from '../planning/plan.ts';
import type { PreparedRun } from '../prepare-run.ts';
import type { RunRecorder } from '../records/run-record.ts';
import { STEP_DEFAULTS } from '../types.ts';
import { recordStepUsage } from './budgets.ts';
import { stoppedWhy } from './run-abort.ts';
import type { NodeRequest, TreeRuntime } from './runtime.ts';
import type { StepsEnd, StepsScope } from './steps-scope.ts';

/** Runs the canaries the steps in `toRun` need; null: the steps may start, else how the run ends. */
export async function checkBackends(
  rt: TreeRuntime,
  node: NodeRequest,
  prep: PreparedRun,
  recorder: RunRecorder,
  scope: StepsScope,
  toRun: PlannedStep[],
): Promise<StepsEnd | null> {
  const recipe = prep.found.recipe;
  if (recipe.canary === false || node.canary === false || toRun.length === 0) return null;
  const vmOf = (vm: boolean) => (vm && prep.vmSpec ? { bwrap: prep.vmSpec.bwrap, writable: [prep.workspace, ...agentStatePaths()] } : null);
  const targets = canaryTargets(
    toRun.map(({ step }) => {
      const s = prep.steps.get(step.label)!;
      return { label: step.label, backendName: s.backendName, auth: step.auth, backend: s.backend, env: s.env, vm: vmOf(s.vm) };
    }),
  );
  for (const target of targets) {
    // A shell step has no agent to ask: its "backend" is /bin/sh.
    if (target.backend.kind === 'custom' && target.backend.shell) continue;
    // Once per backend in the whole tree: a hundred children of one backend check it once.
    // A custom program's canary runs without the step's args, so they do not make another backend.
    const backend = target.backend.kind === 'custom' ? { ...target.backend, args: [] } : target.backend;
    const key = JSON.stringify([target.name, backend, target.vm !== null]);
    let check = rt.canaries.get(key);
    if (!check) {
      rt.view.note(`canary: checking backend ${target.name} of step "${target.labels[0]}"…`);
      check = runCanary(
        rt.pool,
        {
          backend: target.backend,
          cwd: prep.workspace,
          env: childEnv(rt.req.env, target.env, prep.runId, 'canary', recorder.dir),
          timeoutSeconds: recipe.canary_timeout ?? STEP_DEFAULTS.canary_timeout,
          runDir: recorder.dir,
          vm: target.vm,
        },
        scope.signal,
        (report) => scope.budget.add(report, rt.config.prices, recordStepUsage(rt, recorder, 'canary', report)),
      );
      rt.canaries.set(key, check);
    }
    const canary = await check;
    if (scope.signal.aborted) {
      for (const p of toRun) scope.setStep(p.label, { status: 'cancelled', reason: `not started: ${stoppedWhy(scope.signal)}` });
      return { status: 'cancelled', reason: 'cancelled before the first step' };
    }
    if (!canary.ok) {
      rt.stderr.write(`vigil: canary for backend ${target.name} failed: ${canary.reason}; no step was started (it serves steps ${target.labels.join(', ')})\n`);
      for (const p of toRun) scope.setStep(p.label, { status: 'skipped', reason: 'canary failed' });
      return { status: 'failed', reason: `canary failed: ${canary.reason}` };
    }
  }
  return null;
}
