// A run of a composite recipe (pipeline, compound, parallel, adversarial,
// convergent): its own record with `children`, its own budget scope and
// cancellation (a child of its parent's), and a CompositeContext through
// which the type's runner starts child runs and isolated copies.
import { existsSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { linkedSignal } from '../../timing/linked-signal.ts';
import { describeReached } from '../budget/budget-scope.ts';
import { RecipeInputError } from '../errors.ts';
import { childrenIsolation, hasGitCommit } from '../isolation/choose.ts';
import { createCopyIsolation } from '../isolation/copy-modes.ts';
import type { Isolation, StepWorkspace } from '../isolation/isolation.ts';
import { dropBranchesOf, recoverStaleWorktrees } from '../isolation/stale-worktrees.ts';
import { createWorktreeIsolation } from '../isolation/worktree.ts';
import { declaredBy } from '../outside-vars.ts';
import { previousRun } from '../preflight/resume.ts';
import { resolveWorkspace } from '../prepare-run.ts';
import { newRunId, RunRecorder, type RunStatus, runsDir } from '../records/run-record.ts';
import { runIsLive } from '../records/runs-list.ts';
import type { ChildRequest, ChildResult, CompositeContext, CompositeOutcome, CompositeRunner } from '../types/composite.ts';
import { isRunnable } from '../types.ts';
import { parseVarFlags } from '../variables.ts';
import { runBudget } from './budgets.ts';
import { announceRun, finishNode } from './finish.ts';
import { runPre } from './pre-commands.ts';
import { copyNaming, openResultsBranch, varsText } from './results-branch.ts';
import { readHeldOutput } from './output.ts';
import { runAbort, stoppedWhy } from './run-abort.ts';
import { runNode } from './run-node.ts';
import type { NodeRequest, NodeResult, TreeRuntime } from './runtime.ts';

export async function runCompositeNode(rt: TreeRuntime, node: NodeRequest, runner: CompositeRunner): Promise<NodeResult> {
  const { recipe, file } = node.found;
  // run-node.ts gives this node composite types only: a trigger here is a bug, not input.
  if (!isRunnable(recipe)) throw new Error(`${file}: recipe "${recipe.name}" is a ${recipe.type} recipe, which is not run as a composite`);
  if (node.from) throw new RecipeInputError(`--from ${node.from}: recipe "${recipe.name}" is a ${recipe.type} recipe; set "from" on an entry of a pipeline instead`);
  const workspace = node.workspace ?? resolveWorkspace(node.found, rt.projectRoot);
  // --resume: the earlier run's children, by role; those that succeeded are kept, the others resumed.
  const previous = node.resume ? previousRun(rt.projectRoot, recipe.name, node.resume) : null;
  const runId = newRunId();
  const recorder = new RunRecorder(rt.projectRoot, {
    id: runId,
    recipe: recipe.name,
    recipe_file: file,
    type: recipe.type ?? 'sequence',
    status: 'running',
    pid: process.pid,
    started: new Date().toISOString(),
    ended: null,
    project_root: rt.projectRoot,
    workspace,
    transfer_mode: recipe.transfer_mode ?? 'none',
    vars: Object.keys(node.vars),
    resumed_from: previous?.id ?? null,
    from_label: null,
    parent: node.parent?.id ?? rt.req.env.VIGIL_PARENT_RUN ?? null,
    role: node.role,
    // Started by a temporal firing or sentinel reaction (src/triggers): named in the record.
    ...(!node.parent && rt.req.env.VIGIL_TRIGGER ? { trigger: rt.req.env.VIGIL_TRIGGER } : {}),
    children: [],
    ...(recipe.budget ? { budget: recipe.budget } : {}),
    steps: [],
  });
  rt.live.add(recorder);
  node.onStart?.(runId, workspace);
  rt.view.addRun(recorder, node.parent?.id ?? null, node.role);
  announceRun(rt, recorder);
  if (!node.parent) rt.view.note(`run ${runId} of ${recipe.type} recipe "${recipe.name}"; record in ${relative(rt.req.cwd, recorder.dir) || '.'}`);

  // What crashed runs left in worktrees: committed on their branches, the worktrees removed.
  if (!node.parent && recipe.transfer_mode !== 'none' && hasGitCommit(workspace))
    for (const line of await recoverStaleWorktrees(workspace, (id) => runIsLive(rt.projectRoot, id), runId)) rt.view.note(line);

  const abort = runAbort(node.signal);
  const controller = abort.controller;
  // --resume: the budget is run-wide, so the run starts from what the run it resumes spent (its children's included).
  const budget = runBudget(rt, recorder, node.parent?.budget ?? null, controller, previous?.usage);
  const self = { id: runId, recorder, budget };

  // The results of a run that copies its workspace land on a branch of their own (run-branch.ts).
  const branch = await openResultsBranch(recipe, workspace, runId, previous?.id ?? null);
  const merge = rt.req.merge === true || ((recipe.type === 'parallel' || recipe.type === 'adversarial' || recipe.type === 'convergent') && recipe.merge === true);
  // Said now, not only after an hour's run: a merge asked for onto uncommitted changes will not happen.
  if (branch && merge && !node.parent && branch.dirtyAtStart.length > 0)
    rt.view.note(`the results will stay on branch ${branch.branch}, not merged: the working tree has uncommitted changes (${dirtySummary(branch.dirtyAtStart)}); commit or stash them before the run to have it merge`);
  const base = branch?.workspace ?? workspace;
  const whatOf = new Map<string, string>();
  let isolation: Promise<Isolation> | null = null;
  const isolate = async (label: string, what: string): Promise<StepWorkspace> => {
    whatOf.set(label, what);
    isolation ??= (async () => {
      const mode = childrenIsolation(recipe, hasGitCommit(base));
      if (mode === 'none') return { mode: 'none', recover: async () => [], prepare: async () => sharedCopy(workspace) } as Isolation;
      if (mode === 'worktree') return createWorktreeIsolation(base, runId, file, copyNaming(recipe, runId, previous?.id ?? null, base, (l) => whatOf.get(l) ?? l));
      return createCopyIsolation(mode, workspace, rt.projectRoot, runId, file);
    })();
    return (await isolation).prepare(label, '.');
  };

  const runChild = async (req: ChildRequest, signal: AbortSignal): Promise<ChildResult> => {
    const found = rt.tree.byName.get(req.name)!;
    const vars = { ...node.vars, ...req.vars };
    recorder.updateChild(req.role, { name: req.name, status: 'pending', vars: req.vars, workspace: req.workspace ?? null });
    if (signal.aborted) {
      const reason = `not started: ${stoppedWhy(signal)}`;
      recorder.updateChild(req.role, { status: 'cancelled', reason });
      return { runId: null, status: 'cancelled', output: '', outputFile: '', reason };
    }
    const before = previous?.children?.find((c) => c.role === req.role && c.name === req.name);
    if (before?.status === 'succeeded' && before.run_id) {
      const outputFile = join(runsDir(rt.projectRoot), before.run_id, 'output.txt');
      const now = new Date().toISOString();
      recorder.updateChild(req.role, { run_id: before.run_id, status: 'succeeded', started: now, ended: now, reason: `reused: succeeded in run ${previous!.id}` });
      return { runId: before.run_id, status: 'succeeded', output: readHeldOutput(outputFile).text, outputFile: existsSync(outputFile) ? outputFile : '' };
    }
    if (req.pre?.length) {
      const cwd = req.workspace ?? resolveWorkspace(found, rt.projectRoot);
      const allow = recipe.allow_destructive_intents === true;
      const origin = { outside: parseVarFlags(rt.req.dataVars ?? [], '--data-var'), declared: declaredBy(recipe, rt.req.declared ?? []) };
      const failed = await runPre(req.pre, cwd, vars, rt.req.env, allow, signal, (l) => rt.view.note(`${req.role}: ${l}`), origin);
      if (failed) {
        recorder.updateChild(req.role, { status: 'failed', reason: failed, started: new Date().toISOString(), ended: new Date().toISOString() });
        return { runId: null, status: 'failed', output: '', outputFile: '', reason: failed };
      }
    }
    let result: NodeResult;
    try {
      result = await runNode(rt, {
        found,
        parent: self,
        role: req.role,
        vars,
        env: { ...node.env, ...(req.env ?? {}) },
        signal,
        ...(req.workspace ? { workspace: req.workspace } : {}),
        // An entry's own model wins; otherwise the model this composite was given (vigil sequence --model) goes down.
        ...((req.model ?? node.model) ? { model: req.model ?? node.model } : {}),
        ...(before?.run_id ? { resume: before.run_id } : req.from ? { from: req.from } : {}),
        ...(recipe.canary === false || node.canary === false ? { canary: false as const } : {}),
        onStart: (childId) => recorder.updateChild(req.role, { run_id: childId, status: 'running', started: new Date().toISOString() }),
      });
    } catch (error) {
      const reason = (error as Error).message;
      recorder.updateChild(req.role, { status: 'failed', reason, ended: new Date().toISOString() });
      return { runId: null, status: 'failed', output: '', outputFile: '', reason };
    }
    recorder.updateChild(req.role, { status: result.status, ended: new Date().toISOString(), ...(result.reason ? { reason: result.reason } : {}) });
    return result;
  };

  const ctx: CompositeContext = {
    runId,
    runDir: recorder.dir,
    found: node.found,
    workspace,
    projectRoot: rt.projectRoot,
    signal: controller.signal,
    inheritedEnv: node.env,
    isolate,
    say: (line) => rt.view.note(line),
    planChildren(children) {
      for (const c of children) recorder.updateChild(c.role, { name: c.name, status: 'pending', vars: c.vars });
    },
    skipChild(role, name, reason, status = 'skipped') {
      recorder.updateChild(role, { name, status, reason });
    },
    annotateChild(role, patch, status) {
      const child = recorder.run.children?.find((c) => c.role === role);
      if (child) recorder.updateChild(role, { result: { ...(child.result ?? {}), ...patch }, ...(status ? { status } : {}) });
    },
    async runChild(req) {
      if (!req.signal) return runChild(req, controller.signal);
      const linked = linkedSignal([controller.signal, req.signal]);
      try {
        return await runChild(req, linked.signal);
      } finally {
        linked.dispose();
      }
    },
  };

  let outcome: CompositeOutcome;
  try {
    outcome = await runner(ctx);
  } catch (error) {
    outcome = { status: 'failed', output: '', reason: (error as Error).message };
  }
  abort.detach();
  budget.dispose();
  if (branch) {
    const title = `vigil ${runId}: ${recipe.type} recipe "${recipe.name}"${varsText(node.vars)}`;
    // Below a pipeline or compound (they share their workspace), the results join it as the other entries' do.
    const ended = await branch.finish({ succeeded: outcome.status === 'succeeded', merge, title, handOver: node.parent !== null });
    for (const line of ended.lines) rt.view.note(line);
    recorder.run.results = ended.lines.join('; ');
    if (ended.conflict) outcome = { ...outcome, status: 'failed', reason: ended.conflict };
    if (previous) await dropBranchesOf(workspace, previous.id);
  }
  showResult(rt, recorder.run.id, recipe.name, recipe.type, outcome.output);
  for (const c of recorder.run.children ?? [])
    if (c.status === 'pending' || c.status === 'running') recorder.updateChild(c.role, { status: 'cancelled', reason: `not started: ${stoppedWhy(controller.signal)}` });
  let status: RunStatus = outcome.status;
  let reason = outcome.reason;
  const reached = budget.endsOverBudget(status === 'succeeded');
  const overChild = (recorder.run.children ?? []).find((c) => c.status === 'over_budget');
  if (reached || (overChild && status !== 'succeeded')) {
    status = 'over_budget';
    // What stopped it, not what the type's runner saw of it ("cancelled").
    reason = reached ? describeReached(reached) : `child ${overChild!.role} ("${overChild!.name}") over budget${overChild!.reason ? `: ${overChild!.reason}` : ''}`;
  } else if (controller.signal.aborted && status !== 'succeeded') status = 'cancelled';
  return finishNode(rt, recorder, status, reason, outcome.outputFile ? readHeldOutput(outcome.outputFile) : { text: outcome.output });
}

/** A contest's result on the screen, before its run's last line: the scoreboard and winner, or the verdicts. */
function showResult(rt: TreeRuntime, runId: string, name: string, type: string | undefined, output: string): void {
  const title = type === 'convergent' ? 'scoreboard' : type === 'adversarial' ? 'verdicts' : null;
  if (!title || !output.trim()) return;
  rt.view.note(`${title} of run ${runId} ("${name}"):`);
  for (const line of output.trimEnd().split('\n')) rt.view.note(`  ${line.replaceAll('\t', '  ')}`);
}

/** transfer_mode "none" on a composite: children share the workspace on purpose. */
function sharedCopy(workspace: string): StepWorkspace {
  if (!existsSync(workspace)) mkdirSync(workspace, { recursive: true });
  return { dir: workspace, root: workspace, bringBack: async () => ({ result: 'nothing-to-merge' }), dispose: async () => null };
}

/** `k.txt, src/a.ts and 3 more` from `git status --porcelain` lines. */
function dirtySummary(lines: readonly string[]): string {
  const files = lines.map((l) => l.slice(3));
  return files.length <= 3 ? files.join(', ') : `${files.slice(0, 3).join(', ')} and ${files.length - 3} more`;
}
