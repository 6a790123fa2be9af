// The shape of a run before it starts, for `vigil sequence --dry-run` and
// `vigil recipe check`: waves of steps (a step is in the wave after the
// latest of the steps it waits for), each step's backend, model, isolation,
// budget and the command line its agent starts, and for a composite recipe
// the child runs it starts and the copies of the workspace they work in.
// What a run decides is decided by the run's own functions: the steps are
// prepared by prepareRun, isolation chosen by isolation/choose.ts.
import { existsSync, statSync } from 'node:fs';
import { expandPath } from '../../paths/expand-path.ts';
import { agentInvocation } from '../backends/agent-invocation.ts';
import { chooseBackendName } from '../backends/select.ts';
import { configForRecipe } from '../config/recipe-config.ts';
import type { WorkspaceConfig } from '../../workspace/workspace-config.ts';
import type { RecipeTree } from '../loading/recipe-tree.ts';
import type { Plan, PlannedStep } from '../planning/plan.ts';
import { planRecipe } from '../planning/planners.ts';
import { childrenIsolation, hasGitCommit, type IsolationMode, stepsIsolation } from '../isolation/choose.ts';
import { prepareRun } from '../prepare-run.ts';
import { DEFAULT_ROUNDS } from '../types/adversarial/run.ts';
import { DEFAULT_STRATEGIES } from '../types/convergent/run.ts';
import { entryWorkspace } from '../types/pipeline/run.ts';
import { recipeTypeDef } from '../types/registry.ts';
import type { VaultReader } from '../../vault/vault-reader.ts';
import type { Budget, FoundRecipe, PipelineEntry } from '../types.ts';
import { isRunnable, STEP_DEFAULTS } from '../types.ts';
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
  /** The agent's program and arguments as the run starts them (files of the run folder as <run>/…), or an HTTP provider's URL; null when the run would not start. */
  agent: { command: string; args: string[] } | { url: string } | null;
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
  /** --var: the variables the steps are prepared with (a child gets its parent's and its own). */
  vars?: Record<string, string>;
  vault?: VaultReader;
  cwd?: string;
}

/** Where a node of the plan works: a directory, or a copy of one the run makes. */
interface Place {
  workspace: string | null;
  copy: IsolationMode | null;
}

function isolationOf(mode: IsolationMode, vm: boolean): string {
  const base = mode === 'none' ? 'none (shared workspace)' : mode;
  return vm ? `${base} + vm (bubblewrap)` : base;
}

function childrenIsolationText(type: string, mode: IsolationMode): string {
  if (mode === 'none') return 'none (children share the workspace: transfer_mode "none")';
  const copy = mode === 'worktree' ? 'a git worktree (branch vigil/<run>-<label>)' : `a ${mode} copy`;
  const whose = type === 'adversarial' ? 'one for the contest (blue, red and the judge work in it)' : type === 'convergent' ? 'one per strategy (its scorer works in it)' : 'one per child';
  return `${mode}: ${copy}, ${whose}, merged back`;
}

/** The agent command line of each step, prepared as the run prepares it; the reason when it would not start. */
function preparedAgents(input: PlanInput, found: FoundRecipe, vars: Record<string, string>, model: string | undefined, place: Place): Map<string, StepView['agent']> | string {
  const out = new Map<string, StepView['agent']>();
  try {
    const prep = prepareRun(
      { name: found.recipe.name, vars: [], cwd: input.cwd ?? input.projectRoot, env: input.env, vault: input.vault ?? { get: () => null }, ...(input.backend ? { backend: input.backend } : {}) },
      { found, vars, config: input.config, ...(model ? { model } : {}), ...(place.workspace && !place.copy ? { workspace: place.workspace } : {}) },
    );
    for (const [label, step] of prep.steps) {
      const how = agentInvocation(step.backend, { vm: step.vm });
      const inRun = (a: string) => a.split(prep.runDir).join('<run>');
      out.set(label, 'url' in how ? how : { command: how.command, args: how.args.map(inRun) });
    }
    return out;
  } catch (error) {
    return (error as Error).message.split('\n')[0]!;
  }
}

export function planView(
  input: PlanInput,
  found: FoundRecipe = input.tree.root,
  via: string | null = null,
  model = input.model,
  depth = 0,
  vars: Record<string, string> = input.vars ?? {},
  place: Place = { workspace: null, copy: null },
): PlanView {
  const { recipe, file } = found;
  const def = recipeTypeDef(recipe.type);
  const workspace = place.workspace ?? resolveWorkspaceOrNull(found, input.projectRoot);
  const view: PlanView = {
    recipe: recipe.name,
    type: recipe.type ?? 'sequence',
    file,
    via,
    workspace: place.copy ? `${place.workspace} (a ${place.copy} copy the run makes of it)` : (workspace ?? `${recipe.workspace} (not a directory)`),
    isolation: isolationOf(stepsIsolation(recipe), (isRunnable(recipe) ? recipe.vm : undefined) ?? false),
    budget: (isRunnable(recipe) ? recipe.budget : undefined) ?? null,
    waves: [],
    children: [],
    notes: [],
  };
  if (depth === 0 && input.config.concurrency) view.notes.push(concurrencyNote(input.config));
  if (def?.planner) {
    const plan = planRecipe(recipe, file);
    const agents = preparedAgents(input, found, vars, model, place);
    if (typeof agents === 'string') view.notes.push(`the run would not start: ${agents}`);
    view.waves = waves(plan).map((wave) =>
      wave.map(({ step, needs, exclusiveGroup }) => ({
        label: step.label,
        waitsFor: needs,
        backend: chooseBackendName(step, input.backend, configForRecipe(input.config, recipe), input.env),
        model: model ?? step.model ?? null,
        effort: step.effort ?? null,
        isolation: isolationOf(stepsIsolation(recipe), step.vm ?? (isRunnable(recipe) ? recipe.vm : undefined) ?? false),
        timeout: step.timeout ?? STEP_DEFAULTS.timeout,
        budget: step.budget ?? null,
        gate: step.gate === 'review',
        buildCommand: step.build_command !== undefined,
        loop: loopText(step),
        oneAtATime: exclusiveGroup && !step.concurrencySafe ? exclusiveGroup : null,
        agent: typeof agents === 'string' ? null : (agents.get(step.label) ?? null),
      })),
    );
  }
  if (def?.composite) {
    // The copies the run gives its children (composite-node.ts decides with the same function).
    const copy = def.isolatesChildren && workspace ? childrenIsolation(recipe, hasGitCommit(workspace)) : null;
    view.isolation = copy ? childrenIsolationText(view.type, copy) : 'none (each child works in its own workspace; children of one workspace share it)';
    if (copy) view.workspace = workspace ?? view.workspace;
  }
  if (def?.composite && depth < 8) {
    const entries: PipelineEntry[] = recipe.type === 'pipeline' ? (recipe.sequences ?? []) : [];
    const copy = def.isolatesChildren && workspace ? childrenIsolation(recipe, hasGitCommit(workspace)) : null;
    for (const use of childUses(recipe)) {
      const child = input.tree.byName.get(use.name);
      if (!child) continue;
      const entry = recipe.type === 'pipeline' ? entries[Number(/\d+/.exec(use.where)?.[0])] : undefined;
      const when = [entry?.on && entry.on !== 'success' ? `on ${entry.on}` : '', entry?.from ? `from step "${entry.from}"` : '', use.pre.length ? `after ${use.pre.length} pre command${use.pre.length === 1 ? '' : 's'}` : '']
        .filter(Boolean)
        .join(', ');
      const childPlace: Place = copy
        ? { workspace, copy: copy === 'none' ? null : copy }
        : { workspace: recipe.type === 'pipeline' ? (entryWorkspace(entry?.workspace, input.projectRoot) ?? null) : null, copy: null };
      view.children.push(planView(input, child, `${use.where}${when ? ` (${when})` : ''}`, entry?.model ?? model, depth + 1, { ...vars, ...use.vars }, childPlace));
    }
    if (recipe.type === 'adversarial') view.notes.push(`up to ${recipe.rounds ?? DEFAULT_ROUNDS} round(s): blue, then red, then the judge (shown once); a verdict with "done" ends them`);
    if (recipe.type === 'convergent') view.notes.push(`${recipe.strategies ?? DEFAULT_STRATEGIES} strategies of "${recipe.recipe}", at most ${recipe.fanout ?? 'all'} at once, each scored by "${recipe.scorer}"`);
    if (recipe.type === 'parallel') view.notes.push(`${Math.max(1, recipe.vars?.length ?? 0)} runs of "${recipe.recipe}", at most ${recipe.fanout ?? 'all'} at once${recipe.fail_fast ? ', stopping at the first failure' : ''}`);
  }
  return view;
}

/** vigil.yml's concurrency caps and how far they reach: steps of this run wait for a slot under them. */
function concurrencyNote(config: WorkspaceConfig): string {
  const caps = Object.entries(config.concurrency ?? {})
    .map(([pool, cap]) => (pool === 'all' ? `${cap} in all` : `${cap} ${pool} agent${cap === 1 ? '' : 's'}`))
    .join(', ');
  const across = config.server?.base ? `every runner that uses ${config.server.base}` : "this machine's runners";
  return `concurrency (vigil.yml): at most ${caps} at once, across ${across}; a step waits for its slot`;
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
        ...(s.agent ? ['url' in s.agent ? `calls ${s.agent.url}` : `starts ${[s.agent.command, ...s.agent.args].map(shellWord).join(' ')}`] : []),
      ];
      lines.push(`${i2}  ${s.label.padEnd(width)}  ${facts.join('; ')}`);
    }
  });
  for (const child of view.children) lines.push(renderPlanView(child, i2));
  return lines.join('\n');
}

/** A word as a shell would need it written, for the printed command line (one line: a newline as $'…\\n…'). */
function shellWord(word: string): string {
  if (/^[A-Za-z0-9_./:=@%+,<>-]+$/.test(word)) return word;
  if (!/[\n\t\\]/.test(word)) return `'${word.replace(/'/g, "'\\''")}'`;
  return `$'${word.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\t/g, '\\t')}'`;
}
