// A steps node's record: run.json as the run starts (every planned step
// pending), the run made known to the tree (live set, view, parent's
// onStart, the server), and the prompt files each step reads written into
// the run's directory. And, when the runner fails, the steps left unfinished.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { Isolation } from '../isolation/isolation.ts';
import type { PreparedRun } from '../prepare-run.ts';
import { type RunJson, RunRecorder, type StepRecord } from '../records/run-record.ts';
import { announceRun } from './finish.ts';
import type { NodeRequest, TreeRuntime } from './runtime.ts';

function startingRecord(rt: TreeRuntime, node: NodeRequest, prep: PreparedRun, isolation: Isolation): RunJson {
  const { recipe, file } = prep.found;
  return {
    id: prep.runId,
    recipe: recipe.name,
    recipe_file: file,
    type: prep.plan.type,
    status: 'running',
    pid: process.pid,
    started: new Date().toISOString(),
    ended: null,
    project_root: prep.projectRoot,
    workspace: prep.workspace,
    transfer_mode: isolation.mode,
    vars: Object.keys(node.vars),
    resumed_from: prep.resume?.previous.id ?? null,
    from_label: node.from ?? null,
    parent: node.parent?.id ?? rt.req.env.VIGIL_PARENT_RUN ?? null,
    role: node.role,
    // Started by a temporal firing or sentinel reaction (src/triggers): named in the record.
    ...(!node.parent && rt.req.env.VIGIL_TRIGGER ? { trigger: rt.req.env.VIGIL_TRIGGER } : {}),
    ...(recipe.budget ? { budget: recipe.budget } : {}),
    steps: prep.plan.steps.map((p): StepRecord => {
      const s = prep.steps.get(p.label)!;
      return {
        label: p.label,
        status: 'pending',
        backend: s.backendName,
        needs: p.needs,
        wave: p.step.wave ?? null,
        phase: 0,
        phases: 0,
        exit_code: null,
        started: null,
        ended: null,
        output_file: null,
        output_bytes: 0,
        prompt_files: s.promptFiles.map(([path]) => relative(prep.runDir, path)),
      };
    }),
  };
}

/** Creates the run's record and makes the run known; returns its recorder. */
export function openStepsRecord(rt: TreeRuntime, node: NodeRequest, prep: PreparedRun, isolation: Isolation): RunRecorder {
  const recorder = new RunRecorder(prep.projectRoot, startingRecord(rt, node, prep, isolation));
  rt.live.add(recorder);
  node.onStart?.(prep.runId, prep.workspace);
  rt.view.addRun(recorder, node.parent?.id ?? null, node.role);
  announceRun(rt, recorder);
  for (const s of prep.steps.values())
    for (const [path, text] of s.promptFiles) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
    }
  if (!node.parent)
    rt.view.note(`run ${prep.runId} of recipe "${prep.found.recipe.name}" (${prep.plan.steps.length} steps); record in ${relative(rt.req.cwd, recorder.dir) || '.'}`);
  return recorder;
}

/** The runner failed: every step still running, pending or awaiting its gate is recorded cancelled. */
export function cancelUnfinished(recorder: RunRecorder): void {
  for (const s of recorder.run.steps)
    if (s.status === 'running' || s.status === 'pending' || s.status === 'awaiting_gate') recorder.updateStep(s.label, { status: 'cancelled', reason: 'the run failed' });
}
