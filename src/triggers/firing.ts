// One firing (temporal) or reaction (sentinel) as an ordinary run record:
// .vigil/runs/<id>/run.json with `trigger`, one step "target", output.txt,
// a row in vigil.db, and, when a server is configured, observations that
// show it in `vigil watch`.
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expandPath } from '../paths/expand-path.ts';
import { actorOfTrigger } from '../protocol/client-actor.ts';
import { newRunId, type RunJson, RunRecorder, readRunJson, runsDir } from '../recipes/records/run-record.ts';
import { runOutput } from '../recipes/run-recipe.ts';
import { type RunOutput, writeOutput } from '../recipes/tree/output.ts';
import { TRIGGER_DEFAULTS } from '../recipes/types/trigger-fields.ts';
import type { TriggerFields } from '../recipes/types.ts';
import type { Clock } from './clock.ts';
import { runTarget, type TargetFence, type TargetResult } from './target-runner.ts';
import type { TriggerStore } from './trigger-store.ts';

/** Publishes one observation to the project's run monitor; `actor` names who acted (src/protocol/client-actor.ts). */
export type Publish = (type: string, subject: string, data: Record<string, unknown>, actor?: string) => void;
export const FIRING_TYPE = 'ai.vigil.recipe.run';

export interface FiringRequest {
  projectRoot: string;
  recipe: TriggerFields & { type: string };
  recipeFile: string;
  /** `temporal:<name>` or `sentinel:<name>:<seq>`. */
  trigger: string;
  triggerVars: Record<string, string>;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  store: TriggerStore;
  dueMs: number;
  publish?: Publish;
  /** Extra files to write into the run folder before the target starts (name → text). */
  files?: Record<string, string>;
  /** Trigger variables that hold the path of one of `files` (variable → file name). */
  fileVars?: Record<string, string>;
  /** The lease a sentinel's reaction runs under: lost, the target is stopped and the run is `fenced`. */
  fence?: TargetFence;
  /** Environment the target gets besides the recipe's (the lease: VIGIL_LEASE_*). */
  extraEnv?: Record<string, string>;
  /** Stops the target from outside (`temporal fire` interrupted); the reason says by what. */
  stop?: AbortSignal;
}

export interface FiringResult {
  runId: string;
  runDir: string;
  status: 'succeeded' | 'failed' | 'fenced';
  output: string;
  reason?: string;
}

/** The run a recipe-mode target started (its record names this firing as `parent`). */
function childRun(projectRoot: string, parent: string): { run: RunJson; dir: string } | null {
  const root = runsDir(projectRoot);
  for (const id of readdirSync(root).sort().reverse()) {
    if (id.slice(0, 15) < parent.slice(0, 15)) break; // ids start with their start time: older runs cannot be children
    try {
      const run = readRunJson(join(root, id));
      if (run.parent === parent) return { run, dir: join(root, id) };
    } catch {
      // not a run folder, or one being written
    }
  }
  return null;
}

export function workspaceOf(workspace: string | undefined, projectRoot: string): string {
  return workspace ? expandPath(workspace, projectRoot) : projectRoot;
}

export async function fire(req: FiringRequest): Promise<FiringResult> {
  const { recipe, clock, store } = req;
  const mode = recipe.mode ?? TRIGGER_DEFAULTS.mode;
  const ttl = recipe.ttl ?? TRIGGER_DEFAULTS.ttl;
  const runId = newRunId(new Date(clock.now()));
  const started = new Date(clock.now()).toISOString();
  const workspace = workspaceOf(recipe.workspace, req.projectRoot);
  const recorder = new RunRecorder(req.projectRoot, {
    id: runId,
    recipe: recipe.name,
    recipe_file: req.recipeFile,
    type: recipe.type,
    trigger: req.trigger,
    status: 'running',
    pid: process.pid,
    started,
    ended: null,
    project_root: req.projectRoot,
    workspace,
    transfer_mode: 'none',
    vars: Object.keys({ ...recipe.vars, ...req.triggerVars, ...req.fileVars }),
    resumed_from: null,
    from_label: null,
    steps: [
      {
        label: 'target',
        status: 'running',
        backend: mode,
        needs: [],
        wave: null,
        phase: 1,
        phases: 1,
        exit_code: null,
        started,
        ended: null,
        output_file: null,
        output_bytes: 0,
        prompt_files: [],
      },
    ],
  });
  for (const [name, text] of Object.entries(req.files ?? {})) writeFileSync(join(recorder.dir, name), text);
  const triggerVars = { ...req.triggerVars };
  for (const [name, file] of Object.entries(req.fileVars ?? {})) triggerVars[name] = join(recorder.dir, file);
  store.addFiring({ run_id: runId, trigger: req.trigger, recipe: recipe.name, due_ms: req.dueMs, status: 'running', pid: null, started_ms: clock.now(), ended_ms: null, reason: null });
  // The sentinel or schedule that fired is the actor: `agent:sentinel/<name>@<host>`.
  const actor = actorOfTrigger(req.trigger);
  req.publish?.(FIRING_TYPE, runId, { recipe: recipe.name, type: recipe.type, trigger: req.trigger, status: 'running', started: recorder.run.started }, actor);

  const env: Record<string, string | undefined> = { ...recipe.env, ...req.env, ...req.extraEnv, VIGIL_TRIGGER: req.trigger, VIGIL_RUN_ID: runId, VIGIL_PARENT_RUN: runId };
  const spec = {
    mode,
    target: recipe.target,
    vars: { ...recipe.vars },
    outside: triggerVars,
    env,
    cwd: workspace,
    ttlSeconds: ttl,
    allowDestructive: recipe.allow_destructive_intents === true,
    ...(req.fence ? { fence: req.fence } : {}),
    ...(req.stop ? { stop: req.stop } : {}),
  };
  const onSpawn = (pid: number): void => store.setFiringPid(runId, pid);
  let result: TargetResult = await runTarget(spec, clock, onSpawn);
  if (result.status === 'ttl_expired' && (recipe.on_ttl_expire ?? TRIGGER_DEFAULTS.on_ttl_expire) === 'rerun') {
    recorder.event({ type: 'target.rerun', reason: result.reason });
    result = await runTarget(spec, clock, onSpawn);
  }

  let output: RunOutput = { text: result.output };
  if (mode === 'recipe') {
    // The output of a recipe target is its run's output, not the runner's progress lines.
    const child = childRun(req.projectRoot, runId);
    if (child) {
      recorder.event({ type: 'target.run', run: child.run.id, status: child.run.status });
      output = runOutput(child.run, child.dir);
      result = { ...result, output: output.text };
    }
  }
  const status = result.status === 'succeeded' ? 'succeeded' : result.status === 'fenced' ? 'fenced' : 'failed';
  const outputFile = writeOutput(recorder.dir, output);
  writeFileSync(join(recorder.dir, 'steps', 'target.stderr.txt'), result.stderr);
  recorder.updateStep('target', {
    status: status === 'succeeded' ? 'succeeded' : result.status === 'ttl_expired' || result.status === 'fenced' ? 'killed' : 'failed',
    exit_code: result.exitCode,
    ended: new Date(clock.now()).toISOString(),
    output_file: 'output.txt',
    output_bytes: statSync(outputFile).size,
    ...(result.reason ? { reason: result.reason } : {}),
  });
  recorder.finish(status, result.reason);
  store.endFiring(runId, status, clock.now(), result.reason ?? null);
  req.publish?.(FIRING_TYPE, runId, { recipe: recipe.name, type: recipe.type, trigger: req.trigger, status, reason: result.reason ?? null, started: recorder.run.started, ended: recorder.run.ended }, actor);
  return { runId, runDir: recorder.dir, status, output: result.output, ...(result.reason ? { reason: result.reason } : {}) };
}
