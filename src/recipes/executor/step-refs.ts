// `${steps.<label>.output}` and `${steps.<label>.json.<field>…}` in a step's
// prompt: found before the run (so an unknown step or a json field of a step
// without output_schema stops it, and the step waits for the one it reads),
// filled in when the step starts, from what the earlier step left.
import { type Plan, topologicalOrder } from '../planning/plan.ts';
import type { StepView } from './step-outputs.ts';

const STEP_REF = /\$\{steps\.([A-Za-z0-9][A-Za-z0-9_.-]*?)\.(output|json((?:\.[A-Za-z0-9_-]+)*))\}/g;

export interface StepRef {
  label: string;
  kind: 'output' | 'json';
  path: string[];
}

export function findStepRefs(text: string): StepRef[] {
  return [...text.matchAll(STEP_REF)].map((m) => ({
    label: m[1]!,
    kind: m[2] === 'output' ? 'output' : 'json',
    path: (m[3] ?? '').split('.').filter(Boolean),
  }));
}

/**
 * Fills in the references; a step that left nothing (skipped, or no such field) gives an empty string.
 * `place` writes each value (in text a shell runs: as data, shell-data.ts); by default as it is.
 */
export function fillStepRefs(text: string, view: (label: string) => StepView | undefined, place: (value: string, ref: string) => string = (v) => v): string {
  return text.replace(STEP_REF, (ref: string, label: string, kind: string, jsonPath: string | undefined) => place(refValue(view(label), kind, jsonPath), ref));
}

function refValue(v: StepView | undefined, kind: string, jsonPath: string | undefined): string {
  if (!v) return '';
  if (kind === 'output') return v.output;
  let value: unknown = v.json;
  for (const key of (jsonPath ?? '').split('.').filter(Boolean))
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** The text with each reference replaced by `stand`: what the guard reads before the outputs exist. */
export function blankStepRefs(text: string, stand: string): string {
  return text.replace(STEP_REF, stand);
}

/**
 * Checks every step's references against the plan and makes each step wait
 * for the steps it reads; returns the problems (empty: the plan was updated).
 */
export function linkStepRefs(plan: Plan, promptOf: (label: string) => string, file: string): string[] {
  const problems: string[] = [];
  const byLabel = new Map(plan.steps.map((p) => [p.label, p]));
  for (const p of plan.steps) {
    for (const ref of findStepRefs(promptOf(p.label))) {
      const target = byLabel.get(ref.label);
      const where = `${file}: step "${p.label}": \${steps.${ref.label}.${ref.kind}${ref.path.map((k) => `.${k}`).join('')}}`;
      if (ref.label === p.label) problems.push(`${where}: a step cannot read its own output`);
      else if (!target) problems.push(`${where}: no step "${ref.label}"; steps: ${[...byLabel.keys()].join(', ')}`);
      else if (ref.kind === 'json' && !target.step.output_schema) problems.push(`${where}: step "${ref.label}" has no output_schema, so it has no json; read its output instead`);
      else if (!p.needs.includes(ref.label)) p.needs.push(ref.label);
    }
  }
  if (problems.length > 0) return problems;
  const { order, cycle } = topologicalOrder(plan.steps);
  if (cycle) return [`${file}: steps read each other's output in a cycle: ${cycle.join(' → ')}`];
  plan.steps = order;
  return [];
}
