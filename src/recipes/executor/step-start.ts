// What is decided when a step starts rather than before the run: whether its
// `if:` holds (over the earlier steps as they ended), its prompt with their
// outputs filled in, its output_schema file, and the pause before a retry.
// Outputs are data: in a shell step's script they are placed as data
// (shell-data.ts), and for the local agent they never become `run:` lines
// (starter/run-lines.ts); such a prompt is read by the guard again, now that
// it is whole.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PlannedStep } from '../planning/plan.ts';
import type { StepTask } from '../pool/step-task.ts';
import type { ConditionContext } from './conditions.ts';
import type { PreparedRun } from '../prepare-run.ts';
import { isOutside } from '../outside-vars.ts';
import { describeFinding, type DestructiveFinding } from '../preflight/destructive.ts';
import { scanStepPrompt } from '../preflight/destructive-steps.ts';
import type { StepRecord } from '../records/run-record.ts';
import { placeInShell } from '../shell-data.ts';
import { RUN_LINES_ENV, renderAgentPrompt } from '../starter/run-lines.ts';
import { stepView } from './step-outputs.ts';
import { fillStepRefs } from './step-refs.ts';

/** The part of the step runner's context a starting step reads. */
export interface StartContext {
  prep: PreparedRun;
  runDir: string;
  step(label: string): StepRecord;
}

export interface StepInput {
  prompt: string;
  backend: StepTask['backend'];
  outputSchema?: { text: string; file: string };
  /** Environment the backend's program gets besides the step's (the local agent's run: lines). */
  env: Record<string, string>;
}

/**
 * The step's prompt with the earlier steps' outputs filled in (prompt files
 * rewritten, a custom program's prompt arguments too), and its output_schema
 * written where codex and custom programs can read it.
 */
export function stepInput(ctx: StartContext, planned: PlannedStep): StepInput {
  const prepared = ctx.prep.steps.get(planned.label)!;
  const labels = ctx.prep.plan.steps.map((p) => p.label);
  const view = (l: string) => (labels.includes(l) ? stepView(ctx.runDir, ctx.step(l)) : undefined);
  const fill = (text: string) => (text.includes('${steps.') ? fillStepRefs(text, view) : text);
  for (const [path, text] of prepared.promptFiles) if (text.includes('${steps.')) writeFileSync(path, fill(text));
  let backend = prepared.backend;
  if (backend.kind === 'custom') backend = { ...backend, args: backend.args.map(fill) };
  const input: StepInput = { ...promptOf(ctx, planned, view), backend };
  const schema = planned.step.output_schema;
  if (schema) {
    const file = join(ctx.runDir, 'schemas', `${planned.label}.json`);
    mkdirSync(dirname(file), { recursive: true });
    const text = JSON.stringify(schema);
    writeFileSync(file, text);
    input.outputSchema = { text, file };
  }
  return input;
}

/** The prompt the backend gets: outputs of earlier steps filled in as text, or as data where a shell runs it. */
function promptOf(ctx: StartContext, planned: PlannedStep, view: (label: string) => ReturnType<typeof stepView> | undefined): { prompt: string; env: Record<string, string> } {
  const prepared = ctx.prep.steps.get(planned.label)!;
  const r = prepared.rendered;
  const filled = r.promptText.includes('${steps.');
  if (r.agentTemplate !== undefined) {
    const { vars, origin } = ctx.prep;
    const agent = renderAgentPrompt(r.agentTemplate, vars, (name) => isOutside(origin, name, vars[name]), view);
    if (agent.problems.length > 0) throw new Error(`not started: ${agent.problems.join('; ')}`);
    if (filled) refuseFindings(ctx, scanStepPrompt(false, r, ctx.prep.found.file, planned.label, prepared.env, agent.text));
    return { prompt: agent.text, env: { [RUN_LINES_ENV]: JSON.stringify(agent.commands) } };
  }
  if (r.mode === 'shell' && filled) {
    const placed = placeInShell((hole) => fillStepRefs(r.promptText, view, (value, ref) => hole(value, ref)));
    if ('error' in placed) throw new Error(`not started: ${placed.error}`);
    refuseFindings(ctx, scanStepPrompt(true, r, ctx.prep.found.file, planned.label, prepared.env, placed.text));
    return { prompt: placed.text, env: {} };
  }
  return { prompt: filled ? fillStepRefs(r.promptText, view) : r.promptText, env: {} };
}

/** The guard when the step starts, as before the run: refused unless the recipe allows destructive intents. */
function refuseFindings(ctx: StartContext, findings: DestructiveFinding[]): void {
  if (findings.length === 0 || ctx.prep.found.recipe.allow_destructive_intents) return;
  throw new Error(
    `refused when the step started (with the earlier steps' outputs filled in): ${findings.map(describeFinding).join('; ')}; set "allow_destructive_intents": true in the recipe to run anyway`,
  );
}

/** What a step's `if:` sees: the run's variables, the earlier steps, and whether any of them failed. */
export function conditionContext(ctx: StartContext, label: string): ConditionContext {
  const labels = ctx.prep.plan.steps.map((p) => p.label);
  const anyFailed = labels.some((l) => {
    const r = ctx.step(l);
    return (r.status === 'failed' || r.status === 'killed' || r.status === 'conflict') && !r.continued;
  });
  return {
    vars: ctx.prep.steps.get(label)?.vars ?? {},
    step: (l) => (labels.includes(l) ? stepView(ctx.runDir, ctx.step(l)) : undefined),
    anyFailed,
  };
}
