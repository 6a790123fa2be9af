// The end of any run of the tree: final status and reason in run.json, the
// output in output.txt, a line for the person watching, the server told.
// The server is told of a run as it starts and as it ends, with its times,
// its role under its parent and, for a composite, its children: what the
// dashboard draws its timeline from.
import { runActor } from '../../protocol/client-actor.ts';
import { RUN_TYPE } from '../publish/run-monitor.ts';
import type { RunJson, RunRecorder, RunStatus } from '../records/run-record.ts';
import { type RunOutput, writeOutput } from './output.ts';
import type { NodeResult, TreeRuntime } from './runtime.ts';

/** Children listed in one run observation, at most: a parallel of thousands is summed up by its count. */
const childrenListed = 200;

/**
 * A run as the server is told of it (`ai.vigil.recipe.run`). `trigger` is what started its tree (a child's
 * is its root's): a sentinel on `@runs` tells by it the runs its own reactions started.
 */
export function runObservation(run: RunJson, treeTrigger?: string): Record<string, unknown> {
  const children = run.children;
  return {
    recipe: run.recipe,
    type: run.type,
    trigger: run.trigger ?? treeTrigger ?? null,
    status: run.status,
    reason: run.reason ?? null,
    parent: run.parent ?? null,
    role: run.role ?? null,
    budget: run.budget ?? null,
    started: run.started,
    ended: run.ended,
    ...(children
      ? {
          children: children.slice(0, childrenListed).map((c) => ({ role: c.role, name: c.name, run_id: c.run_id, status: c.status, started: c.started, ended: c.ended, reason: c.reason ?? null })),
          children_count: children.length,
        }
      : {}),
  };
}

/**
 * Tells the server a run started, so that the dashboard draws it (and nests a
 * child under its parent) while it runs rather than once it ends.
 */
export function announceRun(rt: TreeRuntime, recorder: RunRecorder): void {
  rt.publisher?.publish(RUN_TYPE, recorder.run.id, runObservation(recorder.run, rt.req.env.VIGIL_TRIGGER), runActor(recorder.run.id));
}

export function finishNode(rt: TreeRuntime, recorder: RunRecorder, status: RunStatus, reason: string | undefined, runOutput: RunOutput): NodeResult {
  const outputFile = writeOutput(recorder.dir, runOutput);
  const output = runOutput.text;
  recorder.updateRun({ output_file: 'output.txt' }, true);
  recorder.finish(status, reason);
  rt.live.delete(recorder);
  rt.publisher?.publish(RUN_TYPE, recorder.run.id, runObservation(recorder.run, rt.req.env.VIGIL_TRIGGER), runActor(recorder.run.id));
  return { runId: recorder.run.id, status, output, outputFile, ...(reason ? { reason } : {}) };
}
