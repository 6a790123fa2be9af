// `--from <label>`: re-runs a recipe from one step. Steps that succeeded in
// the earlier run and are neither that step, nor written after it, nor
// downstream of it are reused (not run again); everything else runs.
import { RecipeInputError } from '../errors.ts';
import type { Plan } from '../planning/plan.ts';
import type { RunJson, StepStatus } from '../records/run-record.ts';
import { readRunJson, runsDir } from '../records/run-record.ts';
import { listRuns } from '../records/runs-list.ts';
import { join } from 'node:path';
import { processAlive } from '../../file-lock/process-alive.ts';

export interface ResumePoint {
  previous: RunJson;
  preset: Map<string, StepStatus>;
}

export function downstreamOf(plan: Plan, label: string): Set<string> {
  const out = new Set([label]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const s of plan.steps) {
      if (!out.has(s.label) && s.needs.some((n) => out.has(n))) {
        out.add(s.label);
        grew = true;
      }
    }
  }
  return out;
}

export function resumePoint(projectRoot: string, recipeName: string, plan: Plan, from: string, runId?: string, written?: string[]): ResumePoint {
  if (!plan.steps.some((s) => s.label === from))
    throw new RecipeInputError(`--from ${from}: recipe "${recipeName}" has no step "${from}"; steps: ${plan.steps.map((s) => s.label).join(', ')}`);
  const runs = listRuns(projectRoot).filter((r) => r.recipe === recipeName);
  const previous = runId ? runs.find((r) => r.id === runId) : runs[0];
  if (!previous)
    throw new RecipeInputError(
      runId ? `--run ${runId}: no run of recipe "${recipeName}" with that id (see "vigil runs")` : `--from ${from}: recipe "${recipeName}" has no earlier run to resume; run it without --from first`,
    );
  const rerun = downstreamOf(plan, from);
  // "From this step on": the steps written after it run again too, even those that do not wait for it.
  if (written) for (const label of written.slice(written.indexOf(from) + 1)) rerun.add(label);
  const preset = new Map<string, StepStatus>();
  for (const s of previous.steps) {
    if (rerun.has(s.label)) continue;
    if ((s.status === 'succeeded' || s.status === 'reused') && plan.steps.some((p) => p.label === s.label)) preset.set(s.label, 'reused');
  }
  return { previous, preset };
}

/** An earlier run of this recipe, by id, for --resume; refused naming why when there is none. */
export function previousRun(projectRoot: string, recipeName: string, runId: string): RunJson {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(runId)) throw new RecipeInputError(`--resume ${JSON.stringify(runId)}: not a run id (see "vigil runs")`);
  let run: RunJson;
  try {
    run = readRunJson(join(runsDir(projectRoot), runId));
  } catch {
    throw new RecipeInputError(`--resume ${runId}: no run with that id in ${runsDir(projectRoot)} (see "vigil runs")`);
  }
  if (run.recipe !== recipeName) throw new RecipeInputError(`--resume ${runId}: that run is of recipe "${run.recipe}", not "${recipeName}"`);
  // A run whose runner died still says "running" until the reaper marks it interrupted: that one can be resumed.
  if (run.status === 'running' && processAlive(run.pid)) throw new RecipeInputError(`--resume ${runId}: that run is still running`);
  return run;
}

/** `--resume <run>`: every step that succeeded in that run is reused; the ones that failed or never finished run again. */
export function resumeFailed(projectRoot: string, recipeName: string, plan: Plan, runId: string): ResumePoint {
  const previous = previousRun(projectRoot, recipeName, runId);
  const preset = new Map<string, StepStatus>();
  for (const s of previous.steps)
    if ((s.status === 'succeeded' || s.status === 'reused') && plan.steps.some((p) => p.label === s.label)) preset.set(s.label, 'reused');
  return { previous, preset };
}
