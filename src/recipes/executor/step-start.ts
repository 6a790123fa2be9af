// What is decided when a step starts rather than before the run: whether its
// `if:` holds (over the earlier steps as they ended), its prompt with their
// outputs filled in, its output_schema file, and the pause before a retry.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PlannedStep } from '../planning/plan.ts';
import type { StepTask } from '../pool/step-task.ts';
import type { ConditionContext } from './conditions.ts';
import type { PreparedRun } from '../prepare-run.ts';
import type { StepRecord } from '../records/run-record.ts';
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
  const input: StepInput = { prompt: fill(prepared.rendered.promptText), backend };
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

/** What a step's `if:` sees: the run's variables, the earlier steps, and whether any of them failed. */
export function conditionContext(ctx: StartContext, label: string): ConditionContext {
  const labels = ctx.prep.plan.steps.map((p) => p.label);
  const anyFailed = labels.some((l) => {
    const r = ctx.step(l);
    return (r.status === 'failed' || r.status === 'killed' || r.status === 'conflict') && !r.continued;
  });
  return {
    vars: ctx.prep.steps.get(label)?.env ?? {},
    step: (l) => (labels.includes(l) ? stepView(ctx.runDir, ctx.step(l)) : undefined),
    anyFailed,
  };
}

/** Waits `ms`; false when the signal aborted first. */
export function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((res) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      res(true);
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      res(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

