// A steps node's plan run: the step runner (executor/run-step.ts: the step's
// directory, its slots, the pool, its gate, merge back) driven by
// executePlan in dependency order; the substrate's pattern detection once
// the steps are done; and the status the run ends with.
import { describeReached } from '../budget/budget-scope.ts';
import { createStepRunner } from '../executor/run-step.ts';
import { type ExecutionResult, executePlan } from '../executor/step-executor.ts';
import type { Isolation } from '../isolation/isolation.ts';
import type { PreparedRun } from '../prepare-run.ts';
import type { RunRecorder } from '../records/run-record.ts';
import { cirStepHooks } from '../types/substrate/cir-steps.ts';
import { stepBudgets } from './budgets.ts';
import { stoppedWhy } from './run-abort.ts';
import type { TreeRuntime } from './runtime.ts';
import type { StepsEnd, StepsScope } from './steps-scope.ts';

/** Runs the steps not preset by --resume; resolves with how the run ends. */
export async function runStepsPlan(rt: TreeRuntime, prep: PreparedRun, recorder: RunRecorder, isolation: Isolation, scope: StepsScope): Promise<StepsEnd> {
  const recipe = prep.found.recipe;
  const cirHooks = cirStepHooks(recipe, prep.projectRoot, recorder.dir);
  const runStep = createStepRunner({
    prep,
    baseEnv: rt.req.env,
    runDir: recorder.dir,
    isolation,
    pool: rt.pool,
    gates: rt.gates,
    step: (label) => recorder.step(label),
    setStep: scope.setStep,
    say: (line) => rt.view.note(line),
    budgets: stepBudgets(rt, recorder, scope.budget),
    slots: rt.slots,
    ...(cirHooks ? { hooks: cirHooks } : {}),
  });
  const result = await executePlan(
    prep.plan,
    { runStep, notRun: (s, status, reason) => scope.setStep(s.label, { status, reason }), runsRegardless: (s) => s.condition?.checksStatus === true },
    scope.signal,
    prep.resume?.preset,
  );
  const patterns = result.cancelled ? null : cirHooks?.complete();
  if (patterns) {
    rt.view.note(`cir: pattern detection found ${patterns.length} pattern(s) of strength ≥ ${recipe.cir?.pattern_min_strength ?? 0.5}`);
    recorder.event({ type: 'cir.patterns', patterns: patterns.map((p) => ({ id: p.id, type: p.type, body: p.body, strength: p.strength })) });
  }
  return planEnd(recorder, scope, result);
}

/**
 * A step killed on a budget, then a step's own limit reached (by an agent that had finished: it stood),
 * then a run's limit (BudgetScope.endsOverBudget), then a cancel, decide before the steps' result.
 */
function planEnd(recorder: RunRecorder, scope: StepsScope, result: ExecutionResult): StepsEnd {
  const budgetKill = recorder.run.steps.find((s) => s.killed_by === 'budget' || s.killed_by === 'minutes');
  if (budgetKill) return { status: 'over_budget', reason: budgetKill.reason };
  const stepLimit = recorder.run.steps.find((s) => s.budget_reached !== undefined);
  if (stepLimit) return { status: 'over_budget', reason: stepLimit.budget_reached };
  const over = scope.budget.endsOverBudget(result.ok);
  if (over) return { status: 'over_budget', reason: describeReached(over) };
  if (result.cancelled) return { status: 'cancelled', reason: stoppedWhy(scope.signal) };
  return { status: result.ok ? 'succeeded' : 'failed' };
}
