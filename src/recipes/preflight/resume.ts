// `--from <label>`: re-runs a recipe from one step. Steps that succeeded in
// the earlier run and are neither that step nor downstream of it are reused
// (not run again); everything else runs.
import { RecipeInputError } from '../errors.ts';
import type { Plan } from '../planning/plan.ts';
import type { RunJson, StepStatus } from '../records/run-record.ts';
import { listRuns } from '../records/runs-list.ts';

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

export function resumePoint(projectRoot: string, recipeName: string, plan: Plan, from: string, runId?: string): ResumePoint {
  if (!plan.steps.some((s) => s.label === from))
    throw new RecipeInputError(`--from ${from}: recipe "${recipeName}" has no step "${from}"; steps: ${plan.steps.map((s) => s.label).join(', ')}`);
  const runs = listRuns(projectRoot).filter((r) => r.recipe === recipeName);
  const previous = runId ? runs.find((r) => r.id === runId) : runs[0];
  if (!previous)
    throw new RecipeInputError(
      runId ? `--run ${runId}: no run of recipe "${recipeName}" with that id (see "vigil runs")` : `--from ${from}: recipe "${recipeName}" has no earlier run to resume; run it without --from first`,
    );
  const rerun = downstreamOf(plan, from);
  const preset = new Map<string, StepStatus>();
  for (const s of previous.steps) {
    if (rerun.has(s.label)) continue;
    if ((s.status === 'succeeded' || s.status === 'reused') && plan.steps.some((p) => p.label === s.label)) preset.set(s.label, 'reused');
  }
  return { previous, preset };
}
