// The end of any run of the tree: final status and reason in run.json, the
// output in output.txt, a line for the person watching, the server told.
import { RUN_TYPE } from '../publish/server-publisher.ts';
import type { RunRecorder, RunStatus } from '../records/run-record.ts';
import { writeOutput } from './output.ts';
import type { NodeResult, TreeRuntime } from './runtime.ts';

/**
 * Tells the server a child run started (the root's start is told by
 * run-sequence.ts), so that the dashboard nests it under its parent while it
 * runs rather than once it ends.
 */
export function announceChild(rt: TreeRuntime, recorder: RunRecorder): void {
  if (!recorder.run.parent) return;
  rt.publisher?.publish(RUN_TYPE, recorder.run.id, { recipe: recorder.run.recipe, status: 'running', parent: recorder.run.parent, budget: recorder.run.budget ?? null });
}

export function finishNode(rt: TreeRuntime, recorder: RunRecorder, status: RunStatus, reason: string | undefined, output: string): NodeResult {
  const outputFile = writeOutput(recorder.dir, output);
  recorder.updateRun({ output_file: 'output.txt' }, true);
  recorder.finish(status, reason);
  rt.live.delete(recorder);
  rt.publisher?.publish(RUN_TYPE, recorder.run.id, {
    recipe: recorder.run.recipe,
    status,
    reason: reason ?? null,
    parent: recorder.run.parent ?? null,
    budget: recorder.run.budget ?? null,
  });
  return { runId: recorder.run.id, status, output, outputFile, ...(reason ? { reason } : {}) };
}
