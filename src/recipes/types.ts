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

export interface Recipe {
  name: string;
  description?: string;
  /** Variables the recipe asks for (preflight/parameters.ts). */
  parameters?: Record<string, RecipeParameter>;
  workspace?: string;
  type?: RecipeType;
  requires?: RecipeRequires;
  env?: Record<string, string>;
  steps?: RecipeStep[];
  transfer_mode?: TransferMode;
  vm?: boolean;
  allow_destructive_intents?: boolean;
  canary?: boolean | null;
  canary_timeout?: number;
  cir?: RecipeCir;
  budget?: Budget;
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
  /** Warnings of loading: fields read from another tool's recipes that have no equivalent here. */
  load_warnings?: string[];
  /** parallel: lists expanded to their product, appended to vars. */
  matrix?: Record<string, unknown>;
  // Composite types (src/recipes/types/<type>/schema.json say which type has which).
  sequences?: PipelineEntry[];
  layers?: CompoundLayer[];
  recipe?: string;
  vars?: Array<Record<string, string>>;
  fanout?: number;
  fail_fast?: boolean;
  blue?: ContestSide;
  red?: ContestSide;
  judge?: ContestSide;
  rounds?: number;
  strategies?: number;
  scorer?: string;
  keep_candidates?: boolean;
  /** parallel, adversarial, convergent: merge the run's branch vigil/<run> into the checked-out branch at the end. */
  merge?: boolean;
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
export interface FoundRecipe {
  recipe: Recipe;
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
