// Shapes of a recipe as written by a user (see recipe.schema.json) and of a
// recipe once it has been found on disk.
import type { RecipeProviders } from './loading/recipe-providers.ts';

export type RecipeType =
  | 'sequence'
  | 'pipeline'
  | 'compound'
  | 'parallel'
  | 'adversarial'
  | 'convergent'
  | 'temporal'
  | 'sentinel'
  | 'substrate';

export type TransferMode = 'worktree' | 'mirror' | 'rsync' | 'none';
export type Effort = 'low' | 'medium' | 'high' | 'max';
export type PermissionMode = 'acceptEdits' | 'bypassPermissions';

export interface RecipeStep {
  label: string;
  /** Always present once loaded (loading/normalize.ts gives [] when the step has only a prompt). */
  args: string[];
  /** The prompt written inline. */
  prompt?: string;
  backend?: string;
  model?: string;
  effort?: Effort;
  auth?: string;
  permission_mode?: PermissionMode;
  completion_keyword?: string;
  max_phases?: number;
  timeout?: number;
  inactivity_timeout?: number;
  build_command?: string;
  depends_on?: string[];
  gate?: 'review';
  gate_options?: string[];
  gate_action?: string;
  /** Seconds a terminal prompt waits before gate_action applies. */
  gate_timeout?: number;
  dir?: string;
  env?: Record<string, string>;
  vm?: boolean;
  wave?: number;
  concurrencySafe?: boolean;
  outputPersistenceThreshold?: number;
  budget?: Budget;
  /** Tries in all (the first included) and the seconds before the first retry, doubled before each next one. */
  retry?: { attempts: number; backoff_s?: number };
  /** A condition (executor/conditions.ts); false: the step is skipped and its dependents go on. */
  if?: string;
  /** A failure of this step does not skip its dependents nor fail the run. */
  continue_on_error?: boolean;
  /** Run the agent again, continuing its session, until a condition holds (loop/loop-spec.ts). */
  loop?: { until: { build?: true; line?: string; if?: string }; max_iterations: number };
  /** Retries and loop iterations start a new agent session. */
  fresh_session?: boolean;
  /** Longest wait for a provider's usage limit to reset ("6h", "30m", seconds). */
  usage_limit_wait?: string | number;
  /** A JSON Schema the step's output (its last JSON object) must match; readable as ${steps.<label>.json.<field>}. */
  output_schema?: Record<string, unknown>;
  // Fields of recipes written for mentu, mapped by loading/mentu.ts.
  allowed_tools?: string[];
  max_output_tokens?: number;
  max_retries?: number;
  expected_changes?: unknown;
  verify?: { commands?: string[]; git_clean_outside?: unknown };
  /** mentu: the step's effort. */
  reasoning?: string;
  /** mentu's verify.git_clean_outside, mapped: the paths (relative to the step's directory) outside which the step may change nothing of the git tree. */
  clean_outside?: string[];
}

export interface RecipeRequires {
  bins?: string[];
  env?: string[];
  vault_keys?: string[];
}

export interface RecipeParameter {
  description?: string;
  required?: boolean;
  default?: string | number | boolean;
  choices?: Array<string | number | boolean>;
}

/** Fields every recipe may have, whatever its type. */
export interface RecipeCommon {
  name: string;
  description?: string;
  workspace?: string;
  requires?: RecipeRequires;
  env?: Record<string, string>;
  allow_destructive_intents?: boolean;
  /** Warnings of loading: fields read from another tool's recipes that have no equivalent here. */
  load_warnings?: string[];
}

/** Fields of every type `vigil sequence` runs (all but the triggers). */
export interface RunnableCommon extends RecipeCommon {
  /** Variables the recipe asks for (preflight/parameters.ts). */
  parameters?: Record<string, RecipeParameter>;
  transfer_mode?: TransferMode;
  vm?: boolean;
  canary?: boolean | null;
  canary_timeout?: number;
  cir?: RecipeCir;
  budget?: Budget;
}

/** Fields of the types whose recipe lists its own steps (sequence, substrate). */
export interface StepsFields extends RunnableCommon {
  steps: RecipeStep[];
  /** Filled into each step that does not set its own (loading/normalize.ts). */
  defaults?: { backend?: string; model?: string; effort?: Effort; timeout?: number };
  /** mentu: top-level backend, model and providers (loading/mentu.ts). */
  backend?: string;
  model?: string;
  providers?: unknown;
  cloud?: unknown;
  reasoning?: string;
  /** The recipe's own providers in vigil.yml's shape (loading/recipe-providers.ts). */
  recipe_providers?: RecipeProviders;
}

/** A recipe without `type` is a sequence. */
export interface SequenceRecipe extends StepsFields {
  type?: 'sequence';
}

export interface SubstrateRecipe extends StepsFields {
  type: 'substrate';
  query?: SubstrateQuery;
}

export interface PipelineRecipe extends RunnableCommon {
  type: 'pipeline';
  sequences: PipelineEntry[];
}

export interface CompoundRecipe extends RunnableCommon {
  type: 'compound';
  layers: CompoundLayer[];
}

export interface ParallelRecipe extends RunnableCommon {
  type: 'parallel';
  recipe: string;
  vars?: Array<Record<string, string>>;
  /** Lists expanded to their product, appended to vars (loading/normalize.ts). */
  matrix?: Record<string, unknown>;
  fanout?: number;
  fail_fast?: boolean;
  /** Merge the run's branch vigil/<run> into the checked-out branch at the end. */
  merge?: boolean;
}

export interface AdversarialRecipe extends RunnableCommon {
  type: 'adversarial';
  blue: ContestSide;
  red: ContestSide;
  judge: ContestSide;
  rounds?: number;
  merge?: boolean;
}

export interface ConvergentRecipe extends RunnableCommon {
  type: 'convergent';
  recipe: string;
  scorer: string;
  strategies?: number;
  fanout?: number;
  keep_candidates?: boolean;
  merge?: boolean;
}

/** substrate: the CIR context each step reads (types/substrate/cir-steps.ts). */
export interface SubstrateQuery {
  type?: string;
  domain?: string;
  text?: string;
  since?: string;
  scope?: string;
}

export type TriggerMode = 'command' | 'script' | 'recipe';

/** Fields temporal and sentinel recipes share (recipes-and-sdk.md §3; their defaults: types/trigger-fields.ts). */
export interface TriggerFields extends RecipeCommon {
  mode?: TriggerMode;
  target: string;
  vars?: Record<string, string>;
  enabled?: boolean;
  cooldown?: number;
  ttl?: number;
  on_ttl_expire?: 'fail' | 'rerun';
  notify?: 'never' | 'failure' | 'always';
  circuit_breaker_threshold?: number;
  circuit_breaker_reset_ttl?: number;
}

/** A target run on a cron schedule by `vigil daemon` (types/temporal). */
export interface TemporalRecipe extends TriggerFields {
  type: 'temporal';
  schedule: string;
  timezone?: string;
  jitter?: number;
  catch_up?: 'skip' | 'once';
  overlap?: 'skip';
}

/** A target run for each matching observation of a Vigil monitor by `vigil daemon` (types/sentinel). */
export interface SentinelRecipe extends TriggerFields {
  type: 'sentinel';
  watch: { monitor: string; base?: string; token?: string; filter?: Record<string, unknown> };
  concurrency?: number;
  lease_seconds?: number;
  debounce?: number;
}

/** A temporal or sentinel recipe: run by `vigil daemon`, never by `vigil sequence`. */
export type TriggerRecipe = TemporalRecipe | SentinelRecipe;

/** A recipe of one of the types (src/recipes/types/<type>/schema.json say which type has which fields); `type` tells which. */
export type Recipe = SequenceRecipe | SubstrateRecipe | PipelineRecipe | CompoundRecipe | ParallelRecipe | AdversarialRecipe | ConvergentRecipe | TriggerRecipe;

/** A recipe `vigil sequence` runs. */
export type RunnableRecipe = Exclude<Recipe, TriggerRecipe>;

/** A recipe whose steps are its own (sequence, substrate). */
export type StepsRecipe = SequenceRecipe | SubstrateRecipe;

export function isTrigger(recipe: Recipe): recipe is TriggerRecipe {
  return recipe.type === 'temporal' || recipe.type === 'sentinel';
}

export function isRunnable(recipe: Recipe): recipe is RunnableRecipe {
  return !isTrigger(recipe);
}

export function hasSteps(recipe: Recipe): recipe is StepsRecipe {
  return recipe.type === undefined || recipe.type === 'sequence' || recipe.type === 'substrate';
}

export interface RecipeCir {
  write_after_step?: boolean;
  embed?: boolean;
  detect_patterns_on_complete?: boolean;
  query_limit?: number;
  pattern_min_strength?: number;
}

export interface Budget {
  usd?: number;
  tokens?: number;
  minutes?: number;
}

export interface PipelineEntry {
  name: string;
  workspace?: string;
  model?: string;
  on?: 'success' | 'failure' | 'always';
  from?: string;
  pre?: string[];
  vars?: Record<string, string>;
}

export interface CompoundLayer {
  name: string;
  sequence: string;
  depends_on?: string[];
  vars?: Record<string, string>;
}

export interface ContestSide {
  recipe: string;
  vars?: Record<string, string>;
}

export type RecipeScope = 'project' | 'user';

/** A recipe file found on disk, parsed and validated. */
export interface FoundRecipe<R extends Recipe = Recipe> {
  recipe: R;
  file: string;
  scope: RecipeScope;
}

export const STEP_DEFAULTS = {
  max_phases: 10,
  timeout: 1800,
  inactivity_timeout: 600,
  canary_timeout: 60,
  gate_options: ['approve', 'reject'],
} as const;
