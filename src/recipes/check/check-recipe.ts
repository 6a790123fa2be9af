// `vigil recipe check`: every verdict the preflight of a run would reach,
// gathered instead of stopping at the first — schema, graph (steps,
// dependencies, cycles, the tree of recipes), variables (set nowhere, or
// declared and used nowhere), requires, and the destructive-intent guard over
// every prompt, build command and `pre` command of every recipe of the tree,
// each child checked with the variables its parent hands it. Nothing runs.
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { RecipeInputError, RunRefusedError } from '../errors.ts';
import { linkStepRefs } from '../executor/step-refs.ts';
import { loadWorkspaceConfig } from '../../workspace/workspace-config.ts';
import { findRecipe } from '../loading/discovery.ts';
import { prepareRun } from '../prepare-run.ts';
import { loadRecipeTree, type RecipeTree } from '../loading/recipe-tree.ts';
import type { Plan } from '../planning/plan.ts';
import { planRecipe } from '../planning/planners.ts';
import type { DestructiveFinding } from '../preflight/destructive.ts';
import { scanShell } from '../preflight/destructive.ts';
import { scanPlanSteps } from '../preflight/destructive-steps.ts';
import { checkRequires } from '../preflight/requires.ts';
import { findPromptFile, type RenderedStep, renderStep } from '../prompts.ts';
import { recipeTypeDef } from '../types/registry.ts';
import { type FoundRecipe, hasSteps, isTrigger, type Recipe, type TriggerRecipe } from '../types.ts';
import { resolveVariables } from '../variables.ts';
import type { VaultReader } from '../../vault/vault-reader.ts';
import { findProjectRoot } from '../../workspace/project-root.ts';
import { childUses } from './child-uses.ts';
import { resolveWorkspaceOrNull, waves } from './plan-shape.ts';
import { TRIGGER_VARIABLES } from '../outside-vars.ts';

export type SectionName = 'schema' | 'graph' | 'variables' | 'requires' | 'destructive' | 'start';

export interface CheckSection {
  name: SectionName;
  /** refused: a run would not start; warning: it would, and this is worth knowing. */
  status: 'ok' | 'warning' | 'refused';
  summary: string;
  lines: string[];
}

export interface RecipeCheck {
  name: string;
  type: string;
  file: string | null;
  /** How the tree reaches it: `pipeline "release" sequences[0]`; null for the recipe checked. */
  via: string | null;
  allowDestructive: boolean;
  sections: CheckSection[];
  findings: DestructiveFinding[];
}

export interface CheckReport {
  recipe: string;
  ok: boolean;
  recipes: RecipeCheck[];
}

export interface CheckRequest {
  name: string;
  vars: Record<string, string>;
  cwd: string;
  env: NodeJS.ProcessEnv;
  vault: VaultReader;
}

const maxUses = 64;
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;
const firstLine = (e: unknown) => (e as Error).message.split('\n')[0]!;
const problemsOf = (e: unknown) => ((e as RecipeInputError).problems?.length ? (e as RecipeInputError).problems : [firstLine(e)]);

const section = (name: SectionName, status: CheckSection['status'], summary: string, lines: string[] = []): CheckSection => ({ name, status, summary, lines });

export function checkRecipe(req: CheckRequest): CheckReport {
  const projectRoot = findProjectRoot(req.cwd);
  let root: FoundRecipe;
  try {
    root = findRecipe(projectRoot, req.name);
  } catch (error) {
    // Not found is a usage error; found but invalid is the schema verdict.
    const file = /^(\/[^:]+\.(?:json|ya?ml)): /.exec(firstLine(error))?.[1];
    if (!file) throw error;
    const check: RecipeCheck = { name: req.name, type: 'recipe', file, via: null, allowDestructive: false, findings: [], sections: [section('schema', 'refused', firstLine(error).replace(`${file}: `, ''), problemsOf(error))] };
    return { recipe: req.name, ok: false, recipes: [check] };
  }
  let tree: RecipeTree | null = null;
  let treeProblems: string[] = [];
  try {
    tree = loadRecipeTree(projectRoot, req.name);
  } catch (error) {
    treeProblems = problemsOf(error);
  }
  const checks: RecipeCheck[] = [];
  const seen = new Set<string>();
  const visit = (found: FoundRecipe, parentVars: Record<string, string>, via: string | null) => {
    const key = `${found.recipe.name}\0${JSON.stringify(parentVars)}`;
    if (seen.has(key) || checks.length >= maxUses) return;
    seen.add(key);
    const vars = resolveVariables(found.recipe.env, req.env, parentVars);
    const check = checkOne(found, vars, via, projectRoot, req, tree);
    checks.push(check);
    for (const use of [...childUses(found.recipe), ...triggerUse(found.recipe)]) {
      const child = tree?.byName.get(use.name) ?? findOrNull(projectRoot, use.name);
      if (child) visit(child, { ...vars, ...use.vars }, `${found.recipe.type ?? 'sequence'} "${found.recipe.name}" ${use.where}`);
    }
  };
  visit(root, req.vars, null);
  if (treeProblems.length > 0) {
    const graph = checks[0]!.sections.find((s) => s.name === 'graph')!;
    Object.assign(graph, { status: 'refused', summary: 'the tree of recipes it runs is invalid', lines: [...treeProblems, ...graph.lines] });
  }
  const ok = checks.every((c) => c.sections.every((s) => s.status !== 'refused'));
  return { recipe: req.name, ok, recipes: checks };
}

function checkOne(found: FoundRecipe, vars: Record<string, string>, via: string | null, projectRoot: string, req: CheckRequest, tree: RecipeTree | null): RecipeCheck {
  const { recipe, file } = found;
  const def = recipeTypeDef(recipe.type);
  const trigger = triggerOf(recipe);
  const lookup = (name: string) => tree?.byName.get(name) ?? findOrNull(projectRoot, name);
  const check: RecipeCheck = { name: recipe.name, type: recipe.type ?? 'sequence', file, via, allowDestructive: recipe.allow_destructive_intents === true, sections: [], findings: [] };
  const loadWarnings = recipe.load_warnings ?? [];
  check.sections.push(
    loadWarnings.length === 0
      ? section('schema', 'ok', 'valid')
      : section('schema', 'warning', `valid; ${loadWarnings.length} field${loadWarnings.length === 1 ? '' : 's'} with no equivalent here (mentu's), left out of the run`, loadWarnings),
  );

  let plan: Plan | null = null;
  if (def?.planner) {
    try {
      plan = planRecipe(recipe, file);
      const w = waves(plan);
      check.sections.push(section('graph', 'ok', `${plan.steps.length} step${plan.steps.length === 1 ? '' : 's'} in ${w.length} wave${w.length === 1 ? '' : 's'}`));
    } catch (error) {
      check.sections.push(section('graph', 'refused', firstLine(error).replace(`${file}: `, ''), problemsOf(error)));
    }
  } else if (def?.composite) {
    const uses = childUses(recipe);
    check.sections.push(section('graph', 'ok', `${uses.length} child run${uses.length === 1 ? '' : 's'}: ${[...new Set(uses.map((u) => u.name))].join(', ')}`));
  } else if (trigger) {
    const when = 'schedule' in trigger ? `on schedule "${trigger.schedule}"` : `for observations of monitor "${trigger.watch.monitor}"`;
    const mode = trigger.mode ?? 'recipe';
    const target = mode === 'recipe' ? lookup(trigger.target) : null;
    if (mode === 'recipe' && !target) check.sections.push(section('graph', 'refused', `target: no recipe named "${trigger.target}" (see "vigil recipe list")`));
    else check.sections.push(section('graph', 'ok', `run by vigil daemon ${when}: ${mode} "${trigger.target}"`));
  } else check.sections.push(section('graph', 'refused', `type "${recipe.type}" is not run by vigil sequence: ${def?.refusal ?? 'unknown type'}`));

  if (recipe.workspace && !resolveWorkspaceOrNull(found, projectRoot)) {
    const graph = check.sections.find((x) => x.name === 'graph')!;
    Object.assign(graph, { status: 'refused', lines: [...graph.lines, `workspace: "${recipe.workspace}" is not a directory`] });
  }
  // Variables: every missing one at once, as the run reports them.
  const rendered = new Map<string, RenderedStep>();
  const missing: string[] = [];
  const workspace = resolveWorkspaceOrNull(found, projectRoot) ?? projectRoot;
  for (const { step } of plan?.steps ?? []) {
    try {
      rendered.set(step.label, renderStep(step, vars, { recipeFile: file, projectRoot, workspace }));
    } catch (error) {
      if (error instanceof RecipeInputError) missing.push(...error.problems.map((p) => p.replace(`${file}: `, '')));
      else throw error;
    }
  }
  // References to other steps' output (${steps.<label>.output|json…}): the same check as a run's.
  const refProblems = plan && missing.length === 0 ? linkStepRefs(plan, (label) => rendered.get(label)?.promptText ?? '', file) : [];
  if (refProblems.length > 0) {
    const graph = check.sections.find((x) => x.name === 'graph')!;
    Object.assign(graph, { status: 'refused', lines: [...graph.lines, ...refProblems.map((p) => p.replace(`${file}: `, ''))] });
  }
  const unused = unusedVariables(found, tree, projectRoot);
  if (missing.length > 0) check.sections.push(section('variables', 'refused', `${missing.length} set nowhere`, [...missing, ...unused]));
  else if (unused.length > 0) check.sections.push(section('variables', 'warning', `${unused.length} declared and used nowhere`, unused));
  else check.sections.push(section('variables', 'ok', 'every variable used is set'));

  try {
    checkRequires(recipe.requires, req.env, req.vault, file);
    const n = (recipe.requires?.bins?.length ?? 0) + (recipe.requires?.env?.length ?? 0) + (recipe.requires?.vault_keys?.length ?? 0);
    check.sections.push(section('requires', 'ok', n === 0 ? 'nothing required' : `all ${n} met`));
  } catch (error) {
    if (!(error instanceof RunRefusedError)) throw error;
    check.sections.push(section('requires', 'refused', `${error.problems.length} not met`, error.problems));
  }

  if (plan) check.findings.push(...scanPlanSteps(plan, rendered, vars, file));
  // A trigger's command target runs as `sh -c` with its vars.
  if (trigger && trigger.mode === 'command') check.findings.push(...scanShell(trigger.target, 'target', { ...vars, ...(trigger.vars ?? {}) }));
  // A pipeline entry's `pre` commands, under this recipe's allow_destructive_intents as when it runs them.
  for (const use of childUses(recipe))
    for (const [i, command] of use.pre.entries()) check.findings.push(...scanShell(command, `${use.where}.pre[${i}]`, { ...vars, ...use.vars }));
  const n = check.findings.length;
  const texts = check.findings.map((f) => `${f.verdict === 'cannot tell' ? 'cannot tell' : 'intent'}: ${f.where.replace(`${file}: `, '')}:${f.line}: ${f.pattern.replace(/^cannot tell: /, '')}: ${f.excerpt}`);
  if (n === 0) check.sections.push(section('destructive', 'ok', 'no destructive intent found'));
  else if (check.allowDestructive) check.sections.push(section('destructive', 'warning', `${n} found, allowed by "allow_destructive_intents": true`, texts));
  else check.sections.push(section('destructive', 'refused', `${n} found (set "allow_destructive_intents": true to run anyway)`, texts));
  if (plan && !check.sections.some((s) => s.status === 'refused')) check.sections.push(startSection(found, vars, projectRoot, req));
  return check;
}

/**
 * What would stop a run of the tree before it starts, each recipe's `start` verdict: a composite run
 * refuses on these before it starts anything (run-sequence.ts), as a sequence run does on its own.
 */
export function treeStartRefusals(req: CheckRequest): string[] {
  return checkRecipe(req).recipes.flatMap((r) =>
    r.sections
      .filter((s) => s.name === 'start' && s.status === 'refused')
      .flatMap((s) => [`${r.via ? `${r.via} → ` : ''}${r.type} "${r.name}" (${r.file}): ${s.summary}`, ...s.lines.map((l) => `  ${l}`)]),
  );
}

/**
 * What else would keep the run from starting — backends and their flags, vigil.yml, auth profiles, the
 * vault, budgets, bubblewrap — found by the very preparation a run makes (prepare-run.ts), so that
 * check and sequence cannot disagree. Reported once the verdicts above are clean (they stop it first).
 */
function startSection(found: FoundRecipe, vars: Record<string, string>, projectRoot: string, req: CheckRequest): CheckSection {
  try {
    const prepared = prepareRun({ name: found.recipe.name, vars: [], cwd: req.cwd, env: req.env, vault: req.vault }, { found, vars, config: loadWorkspaceConfig(projectRoot) });
    const backends = [...new Set([...prepared.steps.values()].map((s) => s.backendName))];
    return section('start', 'ok', `prepared as a run prepares it (backends: ${backends.join(', ')})`);
  } catch (error) {
    const problems = (error as { problems?: string[] }).problems ?? [];
    return section('start', 'refused', firstLine(error).replace(`${found.file}: `, ''), problems.map((p) => p.replace(`${found.file}: `, '')));
  }
}

function triggerOf(recipe: Recipe): TriggerRecipe | null {
  return isTrigger(recipe) ? recipe : null;
}

function triggerUse(recipe: Recipe): Array<{ name: string; where: string; vars: Record<string, string> }> {
  const trigger = triggerOf(recipe);
  if (!trigger || (trigger.mode ?? 'recipe') !== 'recipe') return [];
  // A sentinel's target runs with its observation's variables: set at run time, never missing.
  const fromObservation = recipe.type === 'sentinel' ? Object.fromEntries(TRIGGER_VARIABLES.map((name) => [name, `<${name} of the observation>`])) : {};
  return [{ name: trigger.target, where: 'target', vars: { ...fromObservation, ...(trigger.vars ?? {}) } }];
}

function findOrNull(projectRoot: string, name: string): FoundRecipe | null {
  try {
    return findRecipe(projectRoot, name);
  } catch {
    return null;
  }
}

function namesIn(text: string): Set<string> {
  return new Set([...text.matchAll(REFERENCE)].map((m) => (m[1] ?? m[2])!));
}

/** Every text of a recipe a variable can be used in, and of the recipes it runs (they get its variables). */
function textsOf(found: FoundRecipe, tree: RecipeTree | null, projectRoot: string, depth = 0): string[] {
  const { recipe } = found;
  const texts: string[] = [];
  for (const step of hasSteps(recipe) ? (recipe.steps ?? []) : []) {
    texts.push(...step.args, step.build_command ?? '', step.dir ?? '', ...Object.values(step.env ?? {}));
    for (const arg of step.args) {
      const prompt = findPromptFile(arg, [dirname(found.file), projectRoot]);
      if (prompt) texts.push(safeRead(prompt));
    }
  }
  for (const use of childUses(recipe)) {
    texts.push(...use.pre, ...Object.values(use.vars));
    const child = tree?.byName.get(use.name);
    if (child && depth < 8) texts.push(...textsOf(child, tree, projectRoot, depth + 1));
  }
  return texts;
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function unusedVariables(found: FoundRecipe, tree: RecipeTree | null, projectRoot: string): string[] {
  const { recipe } = found;
  const used = new Set(textsOf(found, tree, projectRoot).flatMap((t) => [...namesIn(t)]));
  const out = Object.keys(recipe.env ?? {})
    .filter((name) => !used.has(name))
    .map((name) => `env.${name} is declared but no prompt, argument, build command or child recipe uses it (steps still get it in their environment)`);
  for (const use of childUses(recipe)) {
    const child = tree?.byName.get(use.name);
    if (!child) continue;
    const childUsed = new Set([...textsOf(child, tree, projectRoot), ...use.pre].flatMap((t) => [...namesIn(t)]));
    const given = recipe.type === 'pipeline' || recipe.type === 'compound' || recipe.type === 'parallel' ? Object.keys(declaredVars(recipe, use.where)) : [];
    for (const name of given) if (!childUsed.has(name)) out.push(`${use.where}.vars.${name} is given to "${use.name}", which does not use it`);
  }
  return out;
}

/** The variables an entry declares itself (not the built-ins its type adds). */
function declaredVars(recipe: Recipe, where: string): Record<string, string> {
  const i = Number(/\[(\d+)\]/.exec(where)?.[1] ?? -1);
  if (recipe.type === 'pipeline') return recipe.sequences?.[i]?.vars ?? {};
  if (recipe.type === 'compound') return recipe.layers?.[i]?.vars ?? {};
  if (recipe.type === 'parallel') return recipe.vars?.[i] ?? {};
  return {};
}
