// The shape of a run before it starts, for `vigil sequence --dry-run` and
// `vigil recipe check`: waves of steps (a step is in the wave after the
// latest of the steps it waits for), each step's backend, model, isolation
// and budget, and for a composite recipe the child runs it starts.
import { existsSync, statSync } from 'node:fs';
import { expandPath } from '../../paths/expand-path.ts';
import { chooseBackendName } from '../backends/select.ts';
import { configForRecipe } from '../config/recipe-config.ts';
import type { WorkspaceConfig } from '../config/workspace-config.ts';
import type { RecipeTree } from '../loading/recipe-tree.ts';
import type { Plan, PlannedStep } from '../planning/plan.ts';
import { planRecipe } from '../planning/planners.ts';
import { recipeTypeDef } from '../types/registry.ts';
import type { Budget, FoundRecipe, PipelineEntry } from '../types.ts';
import { STEP_DEFAULTS } from '../types.ts';
import { childUses } from './child-uses.ts';
import { loopText } from '../loop/loop-spec.ts';

/** Steps grouped by wave: wave 1 waits for nothing, wave n for something in wave n-1. */
export function waves(plan: Plan): PlannedStep[][] {
  const level = new Map<string, number>();
  for (const s of plan.steps) level.set(s.label, Math.max(0, ...s.needs.map((n) => (level.get(n) ?? 0) + 1)));
  const out: PlannedStep[][] = [];
  for (const s of plan.steps) {
    const n = level.get(s.label)!;
    out[n] = [...(out[n] ?? []), s];
  }
  return out.filter(Boolean);
}

export function resolveWorkspaceOrNull(found: FoundRecipe, projectRoot: string): string | null {
  const w = found.recipe.workspace;
  if (!w) return projectRoot;
  const path = expandPath(w, projectRoot);
  return existsSync(path) && statSync(path).isDirectory() ? path : null;
}

export interface StepView {
  label: string;
  waitsFor: string[];
  backend: string | null;
  model: string | null;
  effort: string | null;
  isolation: string;
  timeout: number;
  budget: Budget | null;
  gate: boolean;
  buildCommand: boolean;
  /** "loop until build_command passing, at most 5 iterations", or null. */
  loop: string | null;
  /** Set when it runs one at a time with the other steps of its `wave` (not concurrencySafe). */
  oneAtATime: string | null;
}

export interface PlanView {
  recipe: string;
  type: string;
  file: string;
  /** The parent's field that starts this run, and when (`on: failure`, `from: test`). */
  via: string | null;
  workspace: string;
  isolation: string;
  budget: Budget | null;
  waves: StepView[][];
  children: PlanView[];
  notes: string[];
}

export interface PlanInput {
  tree: RecipeTree;
  projectRoot: string;
  config: WorkspaceConfig;
  env: NodeJS.ProcessEnv;
  backend?: string;
  model?: string;
}

function isolationOf(found: FoundRecipe, vm: boolean): string {
  const mode = found.recipe.transfer_mode ?? 'none';
  const base = mode === 'none' ? 'none (shared workspace)' : mode;
  return vm ? `${base} + vm (bubblewrap)` : base;
}

export function planView(input: PlanInput, found: FoundRecipe = input.tree.root, via: string | null = null, model = input.model, depth = 0): PlanView {
  const { recipe, file } = found;
  const def = recipeTypeDef(recipe.type);
  const view: PlanView = {
    recipe: recipe.name,
    type: recipe.type ?? 'sequence',
    file,
    via,
    workspace: resolveWorkspaceOrNull(found, input.projectRoot) ?? `${recipe.workspace} (not a directory)`,
    isolation: isolationOf(found, recipe.vm ?? false),
    budget: recipe.budget ?? null,
    waves: [],
    children: [],
    notes: [],
  };
  if (def?.planner) {
    const plan = planRecipe(recipe, file);
    view.waves = waves(plan).map((wave) =>
      wave.map(({ step, needs, exclusiveGroup }) => ({
        label: step.label,
        waitsFor: needs,
        backend: chooseBackendName(step, input.backend, configForRecipe(input.config, recipe), input.env),
        model: model ?? step.model ?? null,
        effort: step.effort ?? null,
        isolation: isolationOf(found, step.vm ?? recipe.vm ?? false),
        timeout: step.timeout ?? STEP_DEFAULTS.timeout,
        budget: step.budget ?? null,
        gate: step.gate === 'review',
        buildCommand: step.build_command !== undefined,
        loop: loopText(step),
        oneAtATime: exclusiveGroup && !step.concurrencySafe ? exclusiveGroup : null,
      })),
    );
  }
  if (def?.composite && depth < 8) {
    const entries: PipelineEntry[] = recipe.sequences ?? [];
    for (const use of childUses(recipe)) {
      const child = input.tree.byName.get(use.name);
      if (!child) continue;
      const entry = recipe.type === 'pipeline' ? entries[Number(/\d+/.exec(use.where)?.[0])] : undefined;
      const when = [entry?.on && entry.on !== 'success' ? `on ${entry.on}` : '', entry?.from ? `from step "${entry.from}"` : '', use.pre.length ? `after ${use.pre.length} pre command${use.pre.length === 1 ? '' : 's'}` : '']
        .filter(Boolean)
        .join(', ');
      view.children.push(planView(input, child, `${use.where}${when ? ` (${when})` : ''}`, entry?.model ?? model, depth + 1));
    }
    if (recipe.type === 'adversarial') view.notes.push(`${recipe.rounds ?? 1} round(s): blue, then red, then the judge`);
    if (recipe.type === 'convergent') view.notes.push(`${recipe.strategies ?? 1} strategies of "${recipe.recipe}", at most ${recipe.fanout ?? 'all'} at once, each scored by "${recipe.scorer}"`);
    if (recipe.type === 'parallel') view.notes.push(`${Math.max(1, recipe.vars?.length ?? 0)} runs of "${recipe.recipe}", at most ${recipe.fanout ?? 'all'} at once${recipe.fail_fast ? ', stopping at the first failure' : ''}`);
  }
  return view;
}

const budgetText = (b: Budget | null) =>
  b ? [b.usd !== undefined ? `${b.usd} usd` : '', b.tokens !== undefined ? `${b.tokens} tokens` : '', b.minutes !== undefined ? `${b.minutes} min` : ''].filter(Boolean).join(', ') : 'none';

export function renderPlanView(view: PlanView, indent = ''): string {
  const lines: string[] = [];
  const head = `${view.via ? `${view.via} → ` : 'plan of '}${view.type} "${view.recipe}" (${view.file})`;
  lines.push(`${indent}${head}`);
  const i2 = `${indent}  `;
  lines.push(`${i2}workspace  ${view.workspace}`);
  lines.push(`${i2}isolation  ${view.isolation}`);
  lines.push(`${i2}budget     ${budgetText(view.budget)}`);
  for (const note of view.notes) lines.push(`${i2}${note}`);
  view.waves.forEach((wave, w) => {
    lines.push(`${i2}wave ${w + 1}${wave.length > 1 ? ` (${wave.length} steps)` : ''}`);
    const width = Math.max(...wave.map((s) => s.label.length));
    for (const s of wave) {
      const facts = [
        `backend ${s.backend ?? 'none found (set "backend", --backend or default_backend)'}`,
        `model ${s.model ?? 'the backend default'}`,
        ...(s.effort ? [`effort ${s.effort}`] : []),
        `isolation ${s.isolation}`,
        `timeout ${s.timeout} s`,
        `budget ${budgetText(s.budget)}`,
        ...(s.gate ? ['review gate'] : []),
        ...(s.buildCommand ? ['build command'] : []),
        ...(s.loop ? [s.loop] : []),
        ...(s.oneAtATime && wave.filter((o) => o.oneAtATime === s.oneAtATime).length > 1 ? [`one at a time with the other steps of "wave": ${s.oneAtATime.replace(/^wave /, '')} (not concurrencySafe)`] : []),
        ...(s.waitsFor.length ? [`after ${s.waitsFor.join(', ')}`] : []),
      ];
      lines.push(`${i2}  ${s.label.padEnd(width)}  ${facts.join('; ')}`);
    }
  });
  for (const child of view.children) lines.push(renderPlanView(child, i2));
  return lines.join('\n');
}
