// A run of a recipe whose type plans steps (sequence): prepares it, records
// it, checks its backends with the canary (once per backend in the tree), and
// runs its plan on the shared step pool. Used for the root run and for every
// child of a composite run alike. Each job has its own file:
//   steps-prepare.ts  the request, prepareRun, the isolation (recovered)
//   steps-record.ts   run.json as the run starts, the run made known, prompt files
//   steps-scope.ts    abort signal, budget scope, ledger events, setStep, finish
//   steps-canary.ts   the canary of each backend before the first step
//   steps-plan.ts     the steps run through the pool in plan order, and how the run ends
import { join } from 'node:path';
import { dropBranchesOf } from '../isolation/stale-worktrees.ts';
import { runsDir } from '../records/run-record.ts';
import { reusedStepOutput } from './output.ts';
import type { NodeRequest, NodeResult, TreeRuntime } from './runtime.ts';
import { checkBackends } from './steps-canary.ts';
import { runStepsPlan } from './steps-plan.ts';
import { prepareStepsNode } from './steps-prepare.ts';
import { cancelUnfinished, openStepsRecord } from './steps-record.ts';
import { openStepsScope } from './steps-scope.ts';

export async function runStepsNode(rt: TreeRuntime, node: NodeRequest): Promise<NodeResult> {
  const { prep, isolation } = await prepareStepsNode(rt, node);
  const recorder = openStepsRecord(rt, node, prep, isolation);
  const scope = openStepsScope(rt, node, prep, recorder);
  try {
    // --resume: what succeeded in the earlier run is recorded as such, with its output, and not run again.
    const earlier = prep.resume?.previous;
    for (const [label, status] of prep.resume?.preset ?? []) {
      const output = reusedStepOutput(earlier!.steps.find((s) => s.label === label), join(runsDir(rt.projectRoot), earlier!.id), recorder.dir);
      scope.setStep(label, { status, reason: `succeeded in run ${earlier!.id}`, ...output });
    }
    const toRun = prep.plan.steps.filter((p) => !prep.resume?.preset.has(p.label));
    const stopped = await checkBackends(rt, node, prep, recorder, scope, toRun);
    if (stopped) return scope.finish(stopped.status, stopped.reason);
    const end = await runStepsPlan(rt, prep, recorder, isolation, scope);
    // The resumed run's step copies started from the earlier run's branches: those now merged go.
    if (node.resume && prep.resume && isolation.mode === 'worktree') await dropBranchesOf(prep.workspace, prep.resume.previous.id).catch((e: Error) => rt.view.note(`could not remove the branches of run ${prep.resume!.previous.id}: ${e.message} (vigil runs prune removes them)`));
    return scope.finish(end.status, end.reason);
  } catch (error) {
    cancelUnfinished(recorder);
    scope.finish('failed', (error as Error).message);
    throw error;
  }
}
