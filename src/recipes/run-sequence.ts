// `vigil sequence`: loads and validates the whole tree of recipes, then runs
// the root — a recipe with steps, or a composite whose children are runs of
// their own — on one step pool, one view and one set of signal handlers.
// Returns the exit code.
import { sharedController } from '../timing/shared-controller.ts';
import { join } from 'node:path';
import { loadWorkspaceConfig } from '../workspace/workspace-config.ts';
import { treeStartRefusals } from './check/check-recipe.ts';
import { ExitCode, type ExitCodeValue, RecipeInputError, RunRefusedError } from './errors.ts';
import { STOP_SIGNALS, signalExit } from '../errors/exit-codes.ts';
import { GateKeeper } from './gates/gate.ts';
import { findProjectRoot } from '../workspace/project-root.ts';
import { loadRecipeTree } from './loading/recipe-tree.ts';
import type { AgentSlots } from './concurrency/agent-slots.ts';
import { agentSlotsFor } from './concurrency/slots-for.ts';
import { StepPool } from './pool/step-pool.ts';
import type { RunRequest } from './prepare-run.ts';
import { serverCacheFile } from './publish/run-monitor.ts';
import { ServerPublisher } from './publish/server-publisher.ts';
import { reapInterruptedRuns } from './records/reap-interrupted.ts';
import { type RunRecorder, readRunJson, runsDir } from './records/run-record.ts';
import { runCompositeNode } from './tree/composite-node.ts';
import { RunStopped } from './tree/run-abort.ts';
import { treeConcurrency } from './tree/concurrency.ts';
import { runNode } from './tree/run-node.ts';
import type { TreeRuntime } from './tree/runtime.ts';
import { runStepsNode } from './tree/steps-node.ts';
import { TreeView, type ViewMode } from './tree/tree-view.ts';
import { recipeTypeDef } from './types/registry.ts';
import { resolveParameters, terminalAsker } from './preflight/parameters.ts';
import { declaredBy } from './outside-vars.ts';
import { refuseSpentResume } from './budget/resume-budget.ts';
import { previousRun } from './preflight/resume.ts';
import { parseVarFlags } from './variables.ts';
import { isRunnable } from './types.ts';
import type { StarterLink } from './starter-link.ts';

export interface SequenceIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  interactive: boolean;
  /** One JSON event per line on stdout instead of the human view. */
  json?: boolean;
  /** The process that started this one and asked to be told the root run's id (starter-link.ts): the run is cancelled if it dies. */
  starter?: StarterLink;
}

export async function runSequence(req: RunRequest, io: SequenceIo): Promise<ExitCodeValue> {
  const projectRoot = findProjectRoot(req.cwd);
  const tree = loadRecipeTree(projectRoot, req.name);
  const root = tree.root.recipe;
  const def = recipeTypeDef(root.type)!;
  if ((!def.planner && !def.composite) || !isRunnable(root))
    throw new RecipeInputError(`${tree.root.file}: recipe "${req.name}" has type "${def.type}": ${def.refusal ?? 'this version of vigil cannot run it'}`);
  if (def.composite && req.from)
    throw new RecipeInputError(`--from ${req.from}: recipe "${req.name}" is a ${def.type} recipe; set "from" on an entry of a pipeline instead`);
  if (req.resume && (req.from || req.run)) throw new RecipeInputError('--resume <run> re-runs what failed in that run; it does not take --from or --run');
  if (req.resume) refuseSpentResume(previousRun(projectRoot, req.name, req.resume), root.budget, tree.root.file);
  // Variables from outside (--data-var) are variables like the others; outside-vars.ts keeps them data.
  const vars = { ...parseVarFlags(req.dataVars ?? [], '--data-var'), ...parseVarFlags(req.vars) };
  const ask = io.interactive && !io.json ? () => terminalAsker(io.stdin, io.stdout) : null;
  Object.assign(vars, await resolveParameters(root, tree.root.file, req.env, vars, ask));
  const config = loadWorkspaceConfig(projectRoot);
  // A composite prepares its children only as it starts them: what would refuse one of them refuses the run now.
  if (def.composite && !req.resume) {
    const refusals = treeStartRefusals({ name: req.name, vars, cwd: req.cwd, env: req.env, vault: req.vault });
    if (refusals.length > 0) throw new RunRefusedError(`recipe "${req.name}": a run it starts would be refused; nothing was started (vigil recipe check ${req.name} shows every verdict)`, refusals);
  }

  const mode: ViewMode = io.json ? 'json' : io.interactive ? 'tty' : 'plain';
  const view = new TreeView(io.stdout, io.stderr, mode);
  const reaped = reapInterruptedRuns(projectRoot);
  for (const r of reaped)
    view.note(`run ${r.runId} was interrupted (its runner died)${r.killed.length ? `; stopped its leftover processes ${r.killed.join(', ')}` : ''}`);

  const { threads, perThread } = StepPool.sizeFor(treeConcurrency(tree));
  const pool = new StepPool(threads, perThread);
  const cancel = sharedController();
  const live = new Set<RunRecorder>();
  const killAll = (): void => pool.killAll();
  process.on('exit', killAll);
  let firstSignal: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!firstSignal) {
      firstSignal = signal;
      view.note(`${signal}: cancelling the run; killing running steps…`);
      cancel.abort(new RunStopped(`the run was cancelled by ${signal}`));
      return;
    }
    // A second signal: stop at once, closing every record still running.
    pool.killAll();
    const reason = `killed by a second ${signal}`;
    for (const r of live) {
      r.cancelUnfinished(reason);
      r.finish('cancelled', reason);
    }
    process.exit(signalExit(firstSignal));
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  // Killed, even by SIGKILL, the starter (a script's sdk.sequence.run) can no longer stop its run: the run stops itself.
  const unwatchStarter = io.starter?.watch(() => {
    if (cancel.signal.aborted) return;
    view.note('the process that started this run ended: cancelling the run; killing running steps…');
    cancel.abort(new RunStopped('the run was cancelled: the process that started it ended'));
  });

  let publisher: ServerPublisher | null = null;
  let slots: AgentSlots | null = null;
  try {
    // A server away at the start is waited for like one that goes away later: what the run publishes is
    // queued, and what is still queued at its end is kept for the next run or daemon of the project.
    publisher = config.server ? await ServerPublisher.connect(config.server, projectRoot, (l) => io.stderr.write(`${l}\n`), undefined, { keepTrying: true, keepUnpublished: true }) : null;
    if (publisher?.monitorId) {
      view.note(`publishing to monitor ${publisher.monitorId} on ${config.server!.base}`);
      const hint = publisher.watchHint(serverCacheFile(projectRoot));
      if (hint) view.note(hint);
    }
    const gates = new GateKeeper({
      interactive: io.interactive && !io.json,
      input: io.stdin,
      output: io.stdout,
      pause: () => view.pause(),
      resume: () => view.resume(),
      note: (l) => view.note(l),
    });
    // What the recipe named on the command line declares holds for the recipes it runs.
    const treeReq = { ...req, declared: [...declaredBy(tree.root.recipe)] };
    slots = agentSlotsFor(config, req.env, (l) => view.note(l));
    if (slots) view.note(`concurrency caps ${Object.entries(config.concurrency ?? {}).map(([k, v]) => `${k}: ${v}`).join(', ')} (${slots.where})`);
    const rt: TreeRuntime = { req: treeReq, projectRoot, config, tree, pool, view, gates, publisher, slots, stderr: io.stderr, canaries: new Map(), unpricedSaid: new Set(), live, nodes: { steps: runStepsNode, composite: runCompositeNode } };
    const result = await runNode(rt, {
      found: tree.root,
      parent: null,
      role: null,
      vars,
      env: {},
      signal: cancel.signal,
      ...(io.starter ? { onStart: io.starter.report } : {}),
      ...(req.model ? { model: req.model } : {}),
      ...(req.from ? { from: req.from } : {}),
      ...(req.run ? { run: req.run } : {}),
      ...(req.resume ? { resume: req.resume } : {}),
    });
    view.stop();
    view.note(`run ${result.runId} ${result.status}${result.reason ? ` (${result.reason})` : ''}`);
    const usage = result.runId ? usageLine(join(runsDir(projectRoot), result.runId)) : null;
    if (usage) view.note(usage);
    if (result.status === 'succeeded') return ExitCode.ok;
    if (result.status === 'cancelled') return firstSignal ? signalExit(firstSignal) : ExitCode.cancelled;
    return ExitCode.failed;
  } finally {
    view.stop();
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
    unwatchStarter?.();
    await pool.close();
    await slots?.close();
    process.off('exit', killAll);
    await publisher?.flush();
  }
}

/** The run's total usage, children included, when it used any: `usage: 2000 input + 200 output tokens, $0.0060`. */
function usageLine(runDir: string): string | null {
  let usage: ReturnType<typeof readRunJson>['usage'];
  try {
    usage = readRunJson(runDir).usage;
  } catch {
    return null;
  }
  if (!usage || usage.input_tokens + usage.output_tokens === 0) return null;
  const usd = usage.usd_unknown ? `${usage.usd > 0 ? `$${usage.usd.toFixed(4)} + ` : ''}usd unknown` : `$${usage.usd.toFixed(4)}`;
  return `usage: ${usage.input_tokens} input + ${usage.output_tokens} output tokens, ${usd}`;
}
