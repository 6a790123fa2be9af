// What a composite recipe type (pipeline, compound, parallel, adversarial,
// convergent) is given to do its work: child runs of other recipes, isolated
// copies of its workspace, and its own cancellation signal. The run tree
// (src/recipes/tree/) records children, budgets and statuses around it.
import type { StepWorkspace } from '../isolation/isolation.ts';
import type { RunStatus } from '../records/run-record.ts';
import type { FoundRecipe } from '../types.ts';

export interface ChildRequest {
  /** What this child is to its parent: `entry 2`, `layer build`, `child 3`, `blue round 1`. */
  role: string;
  name: string;
  /** Variables at --var priority: the parent's --var values, then these (built-ins and the entry's own vars). */
  vars: Record<string, string>;
  /** Replaces the child recipe's workspace (an isolated copy, or a pipeline entry's workspace). */
  workspace?: string;
  /** Replaces the model of every step of the child. */
  model?: string;
  /** Starts the child at this step label, reusing earlier successes of its latest run. */
  from?: string;
  /** Extra environment for every step of the child and its descendants (VIGIL_CIR_SCOPE). */
  env?: Record<string, string>;
  /** Shell commands run in the child's workspace before it starts; the first non-zero exit fails the child. */
  pre?: string[];
  /** Cancels this child (and not its siblings), e.g. fail_fast. */
  signal?: AbortSignal;
}

export interface ChildResult {
  runId: string | null;
  status: RunStatus | 'skipped';
  /** The child's output text (its last succeeded step's, or its composite output). */
  output: string;
  /** Absolute path of the child's output.txt, or '' when it has none. */
  outputFile: string;
  reason?: string;
}

export interface CompositeContext {
  readonly runId: string;
  readonly runDir: string;
  readonly found: FoundRecipe;
  readonly workspace: string;
  readonly projectRoot: string;
  readonly signal: AbortSignal;
  /** Environment passed to every child (the run's own inherited env, e.g. a CIR scope). */
  readonly inheritedEnv: Record<string, string>;
  runChild(req: ChildRequest): Promise<ChildResult>;
  /** Lists children that will run (pending), so the record shows them in order before they start. */
  planChildren(children: Array<{ role: string; name: string; vars: Record<string, string> }>): void;
  /** Records a child that will not run (a pipeline entry whose `on` does not hold). */
  skipChild(role: string, name: string, reason: string, status?: 'skipped' | 'cancelled'): void;
  /** Records extra facts about a child already run (merge result, score, verdict), and a status that overrides its run's (conflict). */
  annotateChild(role: string, patch: Record<string, unknown>, status?: 'conflict' | 'failed'): void;
  /**
   * A copy of this run's workspace: a git worktree on branch vigil/<run id>-<label>, else a mirror
   * copy. `what` says whose work it holds (`child 2: recipe "one" with NAME=c`), for its commits.
   */
  isolate(label: string, what: string): Promise<StepWorkspace>;
  say(line: string): void;
}

export interface CompositeOutcome {
  status: 'succeeded' | 'failed' | 'cancelled';
  output: string;
  /** The output.txt that holds the output whole when it is a child's (a pipeline's last entry, a compound's last layer): `output` may be only its end. */
  outputFile?: string;
  reason?: string;
}

export type CompositeRunner = (ctx: CompositeContext) => Promise<CompositeOutcome>;

/** A runner given a recipe of another type: the registry dispatches by type, so this is a bug, not input. */
export function notOfType(ctx: CompositeContext, type: string): never {
  throw new Error(`${ctx.found.file}: recipe "${ctx.found.recipe.name}" is a ${ctx.found.recipe.type ?? 'sequence'} recipe, not ${type}`);
}
