// Everything decided before a step runs: find and validate the recipe, plan
// it, resolve variables and render prompts, check requires, destructive
// intents, backends and isolation. Any problem here stops the run before it
// starts, naming the file and the field.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expandPath } from '../paths/expand-path.ts';
import { authEnv, buildBackendSpec, chooseBackendName, promptModeOf } from './backends/select.ts';
import { configForRecipe } from './config/recipe-config.ts';
import { loadWorkspaceConfig, type WorkspaceConfig } from '../workspace/workspace-config.ts';
import { RecipeInputError, RunRefusedError } from './errors.ts';
import { findRecipe } from './loading/discovery.ts';
import { findProjectRoot } from '../workspace/project-root.ts';
import { linkStepRefs } from './executor/step-refs.ts';
import type { Plan } from './planning/plan.ts';
import { planRecipe, withSteps } from './planning/planners.ts';
import type { BackendSpec, VmSpec } from './pool/step-task.ts';
import { describeFinding } from './preflight/destructive.ts';
import { scanPlanSteps } from './preflight/destructive-steps.ts';
import { checkRequires } from './preflight/requires.ts';
import { type ResumePoint, resumeFailed, resumePoint } from './preflight/resume.ts';
import { type RenderedStep, renderStep } from './prompts.ts';
import { newRunId, runsDir } from './records/run-record.ts';
import { requireBubblewrap } from './isolation/vm.ts';
import { unpricedWhy } from './budget/budget-scope.ts';
import type { Budget, FoundRecipe, RecipeStep, StepsRecipe } from './types.ts';
import { changesHowProgramsStart, declaredBy, environmentOf, isOutside, type VariableOrigin, withheldWarnings } from './outside-vars.ts';
import { parseVarFlags, resolveVariables, substituteWith } from './variables.ts';
import type { VaultReader } from '../vault/vault-reader.ts';

export interface RunRequest {
  name: string;
  vars: string[];
  /** Variables from outside (`--data-var`: a trigger, a webhook, a script): data, environment only when declared (outside-vars.ts). */
  dataVars?: string[];
  /** Names the recipe named on the command line declares (its parameters and env): they hold for every recipe below it. */
  declared?: string[];
  backend?: string;
  /** Replaces the model of every step of the whole tree (a pipeline entry's own model still wins below it). */
  model?: string;
  from?: string;
  run?: string;
  /** An earlier run of this recipe: keep what succeeded in it, run the rest (--resume). */
  resume?: string;
  /** --merge: a composite's results (branch vigil/<run>) are merged into the checked-out branch at the end. */
  merge?: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  vault: VaultReader;
}

/** What a parent run decides for a child run (src/recipes/tree/). */
export interface RunOverrides {
  found: FoundRecipe;
  /** Variables at --var priority (the parent's, then the child's own and its built-ins), instead of --var flags. */
  vars: Record<string, string>;
  /** Absolute directory replacing the recipe's workspace. */
  workspace?: string;
  /** Replaces the model of every step. */
  model?: string;
  /** Environment for every step on top of its variables (VIGIL_CIR_SCOPE, LAYER_*_OUTPUT). */
  env?: Record<string, string>;
  /** vigil.yml as the root run read it: one tree, one reading (not one per child). */
  config?: WorkspaceConfig;
}

export interface PreparedStep {
  rendered: RenderedStep;
  backendName: string;
  backend: BackendSpec;
  /** Rendered prompt files to write into the run record: [absolute path, text]. */
  promptFiles: Array<[string, string]>;
  /** The variables the step's programs get in their environment (outside-vars.ts decides which). */
  env: Record<string, string>;
  /** Every variable of the step, data from outside included, and its environment: what `if:` sees. */
  vars: Record<string, string>;
  vm: boolean;
}

export interface PreparedRun {
  runId: string;
  runDir: string;
  projectRoot: string;
  workspace: string;
  config: WorkspaceConfig;
  found: FoundRecipe<StepsRecipe>;
  plan: Plan;
  steps: Map<string, PreparedStep>;
  varNames: string[];
  warnings: string[];
  resume: ResumePoint | null;
  vmSpec: Omit<VmSpec, 'writable'> | null;
  /** The run's variables, data from outside included: what prompts substitute (again when a step starts). */
  vars: Record<string, string>;
  /** Which variables came from outside, and what the recipe declares. */
  origin: VariableOrigin;
}

export function resolveWorkspace(found: FoundRecipe, projectRoot: string): string {
  const w = found.recipe.workspace;
  if (!w) return projectRoot;
  const path = expandPath(w, projectRoot);
  if (!existsSync(path) || !statSync(path).isDirectory())
    throw new RecipeInputError(`${found.file}: workspace: ${path} is not a directory`);
  return path;
}

/** A reused step's rendering: its unset variables read as empty (it will not run). */
function reusedStep(step: RecipeStep, vars: Record<string, string>, ctx: Parameters<typeof renderStep>[2]): RenderedStep {
  const lenient = new Proxy(vars, { get: (t, k) => (typeof k === 'string' ? (t[k] ?? '') : undefined) });
  try {
    return renderStep(step, lenient, ctx);
  } catch {
    return { label: step.label, args: [], promptText: '', env: {} };
  }
}

export function prepareRun(req: RunRequest, over?: RunOverrides): PreparedRun {
  const projectRoot = findProjectRoot(req.cwd);
  const given = over?.found ?? findRecipe(projectRoot, req.name);
  const config = configForRecipe(over?.config ?? loadWorkspaceConfig(projectRoot), given.recipe);
  let found = withSteps(given);
  if (over?.model && found.recipe.steps) {
    const model = over.model;
    found = { ...found, recipe: { ...found.recipe, steps: found.recipe.steps.map((s) => ({ ...s, model })) } };
  }
  const { recipe, file } = found;
  const plan = planRecipe(recipe, file);
  const workspace = over?.workspace ?? resolveWorkspace(found, projectRoot);
  const outside = parseVarFlags(req.dataVars ?? [], '--data-var');
  const cliVars = over?.vars ?? { ...outside, ...parseVarFlags(req.vars) };
  const vars = resolveVariables(recipe.env, req.env, cliVars);
  const origin: VariableOrigin = { outside, declared: declaredBy(recipe, req.declared ?? []) };
  const isData = (name: string) => isOutside(origin, name, vars[name]);
  const resume = req.from
    ? resumePoint(projectRoot, recipe.name, plan, req.from, req.run, (recipe.steps ?? []).map((s) => s.label))
    : req.resume
      ? resumeFailed(projectRoot, recipe.name, plan, req.resume)
      : null;
  if (req.run && !req.from) throw new RecipeInputError('--run needs --from <label> (the step to resume from)');

  // Render every prompt first, so all missing variables are reported together.
  const problems: string[] = [];
  const rendered = new Map<string, RenderedStep>();
  const backendNames = new Map<string, string | null>();
  for (const { step } of plan.steps) {
    const name = chooseBackendName(step, req.backend, config, req.env);
    backendNames.set(step.label, name);
    const dialect = name === 'claude' || name === 'codex' ? name : 'generic';
    const mode = name ? promptModeOf(name, config, req.env) : 'text';
    try {
      rendered.set(step.label, renderStep(step, vars, { recipeFile: file, projectRoot, workspace, dialect, mode, isData }));
    } catch (error) {
      if (!(error instanceof RecipeInputError)) throw error;
      // A step reused from the earlier run does not run: the variables it used need not be set now.
      if (resume?.preset.has(step.label)) rendered.set(step.label, reusedStep(step, vars, { recipeFile: file, projectRoot, workspace, dialect }));
      else problems.push(...error.problems);
    }
  }
  if (problems.length > 0)
    throw new RecipeInputError(
      problems.every((p) => p.includes('set nowhere') || p.includes('does not exist')) ? 'missing variables, nothing was started' : 'missing variables, or values from outside that cannot be used where they stand; nothing was started',
      problems,
    );
  const refProblems = linkStepRefs(plan, (label) => rendered.get(label)?.promptText ?? '', file);
  if (refProblems.length > 0) throw new RecipeInputError(`${file}: invalid references to other steps' output, nothing was started`, refProblems);

  checkRequires(recipe.requires, req.env, req.vault, file);

  // What each step's programs get in their environment: data from outside only where declared (outside-vars.ts).
  const warnings: string[] = [];
  const { env: varEnv, withheld } = environmentOf(vars, origin);
  warnings.push(...withheldWarnings(withheld, file));
  const stepEnvs = new Map<string, Record<string, string>>();
  for (const { step } of plan.steps) stepEnvs.set(step.label, { ...varEnv, ...stepOwnEnv(step, rendered.get(step.label)!, vars, isData, file, warnings) });
  // The guard reads build commands with the environment they will have: the runner's, then the step's.
  const processVars = resolveVariables(undefined, req.env, {});
  const findings = scanPlanSteps(plan, rendered, vars, file, (label) => ({ ...processVars, ...stepEnvs.get(label)! }));
  if (findings.length > 0) {
    if (!recipe.allow_destructive_intents)
      throw new RunRefusedError(
        `${file}: destructive intents found (or commands whose effect cannot be told before they run); nothing was started (set "allow_destructive_intents": true in the recipe to run anyway)`,
        findings.map(describeFinding),
      );
    for (const f of findings) warnings.push(`warning: destructive intent allowed by the recipe: ${describeFinding(f)}`);
  }

  const runId = newRunId();
  const runDir = join(runsDir(projectRoot), runId);
  const steps = new Map<string, PreparedStep>();
  const vmLabels: string[] = [];
  for (const { step } of plan.steps) {
    const r = rendered.get(step.label)!;
    const name = backendNames.get(step.label);
    if (!name)
      throw new RunRefusedError(
        `${file}: step "${step.label}" has no backend: set its "backend", pass --backend, set default_backend in vigil.yml, or install claude or codex`,
      );
    const promptFiles: Array<[string, string]> = [];
    const args = r.args.map((a, i) => {
      if (!a.prompt) return a.value;
      const path = join(runDir, 'prompts', `${step.label}-${i}.md`);
      promptFiles.push([path, a.prompt.text]);
      return path;
    });
    const backend = buildBackendSpec({ step, name, args, kinds: r.args.map((a) => a.kind), config, vault: req.vault, env: req.env, recipeFile: file });
    const auth = authEnv(step, config, req.vault, file);
    const vm = step.vm ?? recipe.vm ?? false;
    if (vm) vmLabels.push(step.label);
    steps.set(step.label, {
      rendered: r,
      backendName: name,
      backend,
      promptFiles,
      env: { ...stepEnvs.get(step.label)!, ...auth, ...(over?.env ?? {}) },
      vars: { ...vars, ...r.env, ...auth, ...(over?.env ?? {}) },
      vm,
    });
  }
  warnings.push(...checkUsdCounted(steps, plan, recipe.budget, config, file));
  for (const w of recipe.load_warnings ?? []) warnings.push(`warning: ${file}: ${w}`);
  const vmSpec = vmLabels.length > 0 ? { bwrap: requireBubblewrap(vmLabels, file) } : null;
  return {
    runId,
    runDir,
    projectRoot,
    workspace,
    config,
    found,
    plan,
    steps,
    varNames: Object.keys(cliVars),
    warnings,
    resume,
    vmSpec,
    vars,
    origin,
  };
}

/** A step's own `env`: the recipe names each; one that changes how programs start takes no value from outside. */
function stepOwnEnv(step: RecipeStep, r: RenderedStep, vars: Record<string, string>, isData: (name: string) => boolean, file: string, warnings: string[]): Record<string, string> {
  const env = { ...r.env };
  for (const [k, raw] of Object.entries(step.env ?? {})) {
    if (!changesHowProgramsStart(k)) continue;
    let fromOutside = false;
    substituteWith(raw, vars, (name, value) => {
      if (isData(name)) fromOutside = true;
      return value;
    });
    if (!fromOutside) continue;
    delete env[k];
    warnings.push(`warning: ${file}: step "${step.label}".env.${k} is not set: its value comes from outside (a trigger, a webhook or a script) and ${k} changes how programs start`);
  }
  return env;
}

/**
 * Steps whose dollars nothing can count (an HTTP or codex backend reports tokens only, and vigil.yml `prices`
 * has no entry for the model): a warning each, and a usd budget over them is refused, since it could never stop.
 */
function checkUsdCounted(steps: Map<string, PreparedStep>, plan: Plan, recipeBudget: Budget | undefined, config: WorkspaceConfig, file: string): string[] {
  const warnings: string[] = [];
  const refused: string[] = [];
  for (const { step } of plan.steps) {
    const b = steps.get(step.label)!.backend;
    if (b.kind !== 'http' && b.kind !== 'codex') continue;
    if (b.model && config.prices?.[b.model]) continue;
    const why = unpricedWhy(b.model);
    warnings.push(`warning: step "${step.label}": usd is unknown: ${why}; its tokens are counted, its dollars are not`);
    if (step.budget?.usd !== undefined) refused.push(`${file}: step "${step.label}".budget.usd: ${why}`);
    if (recipeBudget?.usd !== undefined) refused.push(`${file}: budget.usd covers step "${step.label}": ${why}`);
  }
  if (refused.length > 0)
    throw new RunRefusedError('a usd budget cannot be counted, nothing was started (add the models to prices in vigil.yml, or use a tokens budget)', refused);
  return warnings;
}
