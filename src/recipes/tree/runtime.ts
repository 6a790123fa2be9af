// What every run of one `vigil sequence` invocation shares — the root run
// and all its descendants: one step pool, one view, one gate keeper, one
// server publisher, the loaded tree of recipes, and the canaries already
// passed. And what a parent asks of a child run, and gets back.
import type { BudgetScope } from '../budget/budget-scope.ts';
import type { AgentSlots } from '../concurrency/agent-slots.ts';
import type { WorkspaceConfig } from '../../workspace/workspace-config.ts';
import type { GateKeeper } from '../gates/gate.ts';
import type { RecipeTree } from '../loading/recipe-tree.ts';
import type { StepPool } from '../pool/step-pool.ts';
import type { RunRequest } from '../prepare-run.ts';
import type { ServerPublisher } from '../publish/server-publisher.ts';
import type { RunRecorder, RunStatus } from '../records/run-record.ts';
import type { FoundRecipe } from '../types.ts';
import type { CompositeRunner } from '../types/composite.ts';
import type { TreeView } from './tree-view.ts';

export interface TreeRuntime {
  req: RunRequest;
  projectRoot: string;
  config: WorkspaceConfig;
  tree: RecipeTree;
  pool: StepPool;
  view: TreeView;
  gates: GateKeeper;
  publisher: ServerPublisher | null;
  /** The concurrency caps of vigil.yml, held for every step of the tree (null: no caps). */
  slots: AgentSlots | null;
  stderr: NodeJS.WriteStream;
  /** Canary results by backend, so a hundred children of one backend check it once. */
  canaries: Map<string, Promise<{ ok: true } | { ok: false; reason: string }>>;
  /** Why usd is unknown, each reason said once per tree: a parallel of twenty children of one model would say it twenty times. */
  unpricedSaid: Set<string>;
  /** Every run recorder still running, so a forced exit can close them all. */
  live: Set<RunRecorder>;
  /** How each kind of node runs (run-sequence.ts fills it in), so that run-node.ts dispatches without importing them and composite-node.ts runs its children through run-node.ts. */
  nodes: NodeRunners;
}

export interface NodeRunners {
  /** A type with a planner: its own steps (steps-node.ts). */
  steps(rt: TreeRuntime, node: NodeRequest): Promise<NodeResult>;
  /** A composite type: its children (composite-node.ts). */
  composite(rt: TreeRuntime, node: NodeRequest, runner: CompositeRunner): Promise<NodeResult>;
}

export interface NodeParent {
  id: string;
  recorder: RunRecorder;
  budget: BudgetScope;
}

export interface NodeRequest {
  found: FoundRecipe;
  parent: NodeParent | null;
  role: string | null;
  /** Variables at --var priority for this run (the root: the --var flags). */
  vars: Record<string, string>;
  workspace?: string;
  model?: string;
  from?: string;
  run?: string;
  /** false: a composite above said "canary": false, which holds for every recipe it runs. */
  canary?: false;
  /** An earlier run of this recipe to resume: what succeeded in it is kept (--resume). */
  resume?: string;
  /** Environment inherited by every step below (VIGIL_CIR_SCOPE). */
  env: Record<string, string>;
  signal: AbortSignal;
  /** Called with the run id as soon as the run record exists. */
  onStart?(runId: string, workspace: string): void;
}

export interface NodeResult {
  runId: string;
  status: RunStatus;
  output: string;
  outputFile: string;
  reason?: string;
}
