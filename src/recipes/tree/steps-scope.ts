// A steps node while it runs: its abort signal (following its parent's), its
// budget scope (inside its parent's), its ledger events, how a step's state
// changes (the record, the ledger and the server told at once), and how the
// run finishes (the final status, over_budget when a limit was reached).
import { runActor } from '../../protocol/client-actor.ts';
import { runEventSink, stepEvents } from '../../run-events/run-events.ts';
import type { BudgetScope } from '../budget/budget-scope.ts';
import type { PreparedRun } from '../prepare-run.ts';
import { STEP_TYPE } from '../publish/run-monitor.ts';
import type { RunRecorder, RunStatus, StepRecord } from '../records/run-record.ts';
import { runBudget } from './budgets.ts';
import { finishNode } from './finish.ts';
import { lastStepOutput, stepLogTail } from './output.ts';
import { runAbort } from './run-abort.ts';
import type { NodeRequest, NodeResult, TreeRuntime } from './runtime.ts';

/** How a run ends, as decided by a job of the node before it finishes. */
export interface StepsEnd {
  status: RunStatus;
  reason?: string;
}

export interface StepsScope {
  /** Aborted when the run is cancelled, its parent is, or its budget is reached. */
  signal: AbortSignal;
  budget: BudgetScope;
  /** Changes a step's record, emits its ledger events and, on a change of status, tells the server. */
  setStep(label: string, patch: Partial<StepRecord>): void;
  /** Ends the run: run.json, output.txt, the ledger's run.end, the server told. */
  finish(status: RunStatus, reason?: string): NodeResult;
}

export function openStepsScope(rt: TreeRuntime, node: NodeRequest, prep: PreparedRun, recorder: RunRecorder): StepsScope {
  const recipe = prep.found.recipe;
  const abort = runAbort(node.signal);
  const controller = abort.controller;
  // --resume: the budget is run-wide, so the run starts from what the run it resumes spent.
  const budget = runBudget(rt, recorder, node.parent?.budget ?? null, controller, node.resume ? prep.resume?.previous.usage : undefined);

  // Ledger entries and plugin hooks (src/run-events/run-events.ts).
  const events = runEventSink(prep.projectRoot, rt.req.env, (l) => rt.stderr.write(`${l}\n`));
  events('run.start', { run: prep.runId, recipe: recipe.name, type: prep.plan.type, ...(node.parent ? { parent: node.parent.id } : {}) });
  const setStep = (label: string, patch: Partial<StepRecord>): void => {
    recorder.updateStep(label, patch);
    for (const [event, data] of stepEvents(prep.runId, recorder.step(label), patch)) events(event, data);
    if (patch.status) {
      const step = recorder.step(label);
      const { label: _l, output: _o, needs: _n, prompt_files: _p, ...state } = step;
      const ended = patch.status !== 'running' && patch.status !== 'pending';
      const log_tail = ended ? stepLogTail(step, recorder.dir) : null;
      rt.publisher?.publish(STEP_TYPE, `${prep.runId}/${label}`, { run: prep.runId, recipe: recipe.name, label, ...state, ...(log_tail ? { log_tail } : {}) }, runActor(prep.runId, label));
    }
  };
  const finish = (status: RunStatus, reason?: string): NodeResult => {
    abort.detach();
    budget.dispose();
    const final = budget.endsOverBudget(status === 'succeeded') ? 'over_budget' : status;
    events('run.end', { run: prep.runId, recipe: recipe.name, status: final });
    return finishNode(rt, recorder, final, reason, lastStepOutput(recorder.run, recorder.dir));
  };
  return { signal: controller.signal, budget, setStep, finish };
}
