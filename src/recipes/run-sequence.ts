// `vigil sequence`: prepares a run, then executes its plan on the step pool
// while the main thread records every change, shows it, asks gates and
// publishes to a Vigil server. Returns the exit code.
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { runEventSink, stepEvents } from '../sdk/run-events.ts';
import { canaryTargets, runCanary } from './canary.ts';
import { ExitCode, RecipeInputError } from './errors.ts';
import { findProjectRoot } from './loading/discovery.ts';
import { loadRecipeTree } from './loading/recipe-tree.ts';
import { recipeTypeDef } from './types/registry.ts';
import { agentStatePaths, childEnv, createStepRunner } from './executor/run-step.ts';
import { executePlan } from './executor/step-executor.ts';
import { GateKeeper } from './gates/gate.ts';
import { createCopyIsolation, createNoIsolation } from './isolation/copy-modes.ts';
import type { Isolation } from './isolation/isolation.ts';
import { createWorktreeIsolation } from './isolation/worktree.ts';
import { StepPool } from './pool/step-pool.ts';
import { type PreparedRun, prepareRun, type RunRequest } from './prepare-run.ts';
import { reapInterruptedRuns } from './records/reap-interrupted.ts';
import { runIsLive } from './records/runs-list.ts';
import { RunRecorder, type StepRecord } from './records/run-record.ts';
import { RUN_TYPE, STEP_TYPE, ServerPublisher } from './publish/server-publisher.ts';
import { STEP_DEFAULTS } from './types.ts';
import { cirStepHooks } from './types/substrate/cir-steps.ts';
import { LiveView } from './view/live-view.ts';

export interface SequenceIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  interactive: boolean;
}

function widestLevel(prep: PreparedRun): number {
  const depth = new Map<string, number>();
  for (const s of prep.plan.steps) depth.set(s.label, Math.max(0, ...s.needs.map((n) => (depth.get(n) ?? 0) + 1)));
  const counts = new Map<number, number>();
  for (const d of depth.values()) counts.set(d, (counts.get(d) ?? 0) + 1);
  return Math.min(32, Math.max(1, ...counts.values()));
}

async function createIsolation(prep: PreparedRun): Promise<Isolation> {
  const mode = prep.found.recipe.transfer_mode ?? 'none';
  if (mode === 'worktree') return createWorktreeIsolation(prep.workspace, prep.runId, prep.found.file);
  if (mode === 'mirror' || mode === 'rsync') return createCopyIsolation(mode, prep.workspace, prep.projectRoot, prep.runId, prep.found.file);
  return createNoIsolation(prep.workspace);
}

export async function runSequence(req: RunRequest, io: SequenceIo): Promise<number> {
  const tree = loadRecipeTree(findProjectRoot(req.cwd), req.name);
  const def = recipeTypeDef(tree.root.recipe.type)!;
  if (!def.planner)
    throw new RecipeInputError(
      `${tree.root.file}: recipe "${req.name}" has type "${def.type}": ${def.refusal ?? 'this version of vigil cannot run it yet'}`,
    );
  const prep = prepareRun(req);
  const { recipe, file } = prep.found;
  const isolation = await createIsolation(prep);
  const recovered = await isolation.recover((id) => runIsLive(prep.projectRoot, id));
  const reaped = reapInterruptedRuns(prep.projectRoot);

  const view = new LiveView(io.stdout, io.interactive, prep.plan.steps.map((s) => s.label));
  const say = (line: string): void => view.note(line);
  for (const w of prep.warnings) io.stderr.write(`${w}\n`);
  for (const r of recovered) say(`removed ${r}, left behind by an interrupted run`);
  for (const r of reaped)
    say(`run ${r.runId} was interrupted (its runner died)${r.killed.length ? `; stopped its leftover processes ${r.killed.join(', ')}` : ''}`);

  const recorder = new RunRecorder(prep.projectRoot, {
    id: prep.runId,
    recipe: recipe.name,
    recipe_file: file,
    type: prep.plan.type,
    status: 'running',
    pid: process.pid,
    started: new Date().toISOString(),
    ended: null,
    project_root: prep.projectRoot,
    workspace: prep.workspace,
    transfer_mode: isolation.mode,
    vars: prep.varNames,
    resumed_from: prep.resume?.previous.id ?? null,
    // Started by a temporal firing or sentinel reaction (src/triggers): named in the record.
    ...(req.env.VIGIL_TRIGGER ? { trigger: req.env.VIGIL_TRIGGER } : {}),
    ...(req.env.VIGIL_PARENT_RUN ? { parent: req.env.VIGIL_PARENT_RUN } : {}),
    from_label: req.from ?? null,
    steps: prep.plan.steps.map((p): StepRecord => {
      const s = prep.steps.get(p.label)!;
      return {
        label: p.label,
        status: 'pending',
        backend: s.backendName,
        needs: p.needs,
        wave: p.step.wave ?? null,
        phase: 0,
        phases: 0,
        exit_code: null,
        started: null,
        ended: null,
        output_file: null,
        output_bytes: 0,
        prompt_files: s.promptFiles.map(([path]) => relative(prep.runDir, path)),
      };
    }),
  });
  for (const s of prep.steps.values()) for (const [path, text] of s.promptFiles) writeFileSync(path, text);
  say(`run ${prep.runId} of recipe "${recipe.name}" (${prep.plan.steps.length} steps); record in ${relative(req.cwd, recorder.dir) || '.'}`);

  const cancel = new AbortController();
  const pool = new StepPool(widestLevel(prep));
  const killAll = (): void => pool.killAll();
  process.on('exit', killAll);
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    interrupts += 1;
    if (interrupts === 1) {
      say(`${signal}: cancelling the run; killing running steps…`);
      cancel.abort();
    } else {
      // A second signal does not wait for the steps: kill everything now, and record it.
      pool.killAll();
      const reason = `killed by a second ${signal}`;
      for (const step of recorder.run.steps) if (!finishedStatuses.has(step.status)) recorder.updateStep(step.label, { status: 'cancelled', reason });
      recorder.finish('cancelled', reason);
      process.exit(ExitCode.cancelled);
    }
  };
  // SIGHUP: the terminal went away; the run is cancelled like at Ctrl-C, not orphaned.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);

  const publisher = prep.config.server ? await ServerPublisher.connect(prep.config.server, prep.projectRoot, (l) => io.stderr.write(`${l}\n`)) : null;
  if (publisher) {
    say(`publishing to monitor ${publisher.monitorId} on ${prep.config.server!.base}`);
    const hint = publisher.watchHint(relative(req.cwd, join(prep.projectRoot, '.vigil', 'server-monitors.json')));
    if (hint) say(hint);
  }
  publisher?.publish(RUN_TYPE, prep.runId, { recipe: recipe.name, status: 'running' });

  const gates = new GateKeeper({
    interactive: io.interactive,
    input: io.stdin,
    output: io.stdout,
    pause: () => view.pause(),
    resume: () => view.resume(),
    note: say,
  });

  const events = runEventSink(prep.projectRoot, req.env, (l) => io.stderr.write(`${l}\n`));
  events('run.start', { run: prep.runId, recipe: recipe.name, type: prep.plan.type });
  const setStep = (label: string, patch: Partial<StepRecord>, note?: string): void => {
    recorder.updateStep(label, patch);
    const s = recorder.step(label);
    for (const [event, data] of stepEvents(prep.runId, s, patch)) events(event, data);
    view.update(label, {
      status: s.status,
      phase: s.phase,
      started: s.started ? Date.parse(s.started) : null,
      ended: s.ended ? Date.parse(s.ended) : null,
      ...(note !== undefined ? { note } : {}),
    });
    if (patch.status) {
      const { label: _l, output: _o, needs: _n, prompt_files: _p, ...state } = s;
      publisher?.publish(STEP_TYPE, `${prep.runId}/${label}`, { run: prep.runId, recipe: recipe.name, label, ...state });
    }
  };

  try {
    // Resumed steps are shown as reused.
    for (const [label, status] of prep.resume?.preset ?? []) setStep(label, { status, reason: `succeeded in run ${prep.resume!.previous.id}` });

    const toRun = prep.plan.steps.filter((p) => !prep.resume?.preset.has(p.label));
    if (recipe.canary !== false && toRun.length > 0) {
      const vmOf = (vm: boolean) => (vm && prep.vmSpec ? { bwrap: prep.vmSpec.bwrap, writable: [prep.workspace, ...agentStatePaths()] } : null);
      const targets = canaryTargets(
        toRun.map(({ step }) => {
          const s = prep.steps.get(step.label)!;
          return { label: step.label, backendName: s.backendName, auth: step.auth, backend: s.backend, env: s.env, vm: vmOf(s.vm) };
        }),
      );
      for (const target of targets) {
        say(`canary: checking backend ${target.name} of step "${target.labels[0]}"…`);
        const canary = await runCanary(
          pool,
          {
            backend: target.backend,
            cwd: prep.workspace,
            env: childEnv(req.env, target.env, prep.runId, 'canary', recorder.dir),
            timeoutSeconds: recipe.canary_timeout ?? STEP_DEFAULTS.canary_timeout,
            runDir: recorder.dir,
            vm: target.vm,
          },
          cancel.signal,
        );
        if (cancel.signal.aborted) {
          for (const p of prep.plan.steps) if (!prep.resume?.preset.has(p.label)) setStep(p.label, { status: 'cancelled', reason: 'not started: the run was cancelled' });
          return finishRun(recorder, 'cancelled', 'cancelled before the first step', view, publisher);
        }
        if (!canary.ok) {
          io.stderr.write(`vigil: canary for backend ${target.name} failed: ${canary.reason}; no step was started (it serves steps ${target.labels.join(', ')})\n`);
          for (const p of prep.plan.steps) if (!prep.resume?.preset.has(p.label)) setStep(p.label, { status: 'skipped', reason: 'canary failed' });
          return finishRun(recorder, 'failed', `canary failed: ${canary.reason}`, view, publisher);
        }
      }
    }

    const cirHooks = cirStepHooks(recipe, prep.projectRoot, recorder.dir);
    const runStep = createStepRunner({
      prep,
      baseEnv: req.env,
      runDir: recorder.dir,
      isolation,
      pool,
      gates,
      step: (label) => recorder.step(label),
      setStep,
      note: (label, note) => view.update(label, { note }),
      say,
      ...(cirHooks ? { hooks: cirHooks } : {}),
    });

    const result = await executePlan(
      prep.plan,
      {
        runStep,
        notRun: (s, status, reason) => setStep(s.label, { status, reason }, reason),
      },
      cancel.signal,
      prep.resume?.preset,
    );
    const patterns = result.cancelled ? null : cirHooks?.complete();
    if (patterns) {
      say(`cir: pattern detection found ${patterns.length} pattern(s) of strength ≥ ${recipe.cir?.pattern_min_strength ?? 0.5}`);
      recorder.event({ type: 'cir.patterns', patterns: patterns.map((p) => ({ id: p.id, type: p.type, body: p.body, strength: p.strength })) });
    }
    if (result.cancelled) return finishRun(recorder, 'cancelled', 'cancelled by a signal', view, publisher);
    return finishRun(recorder, result.ok ? 'succeeded' : 'failed', undefined, view, publisher);
  } finally {
    events('run.end', { run: prep.runId, recipe: recipe.name, status: recorder.run.status });
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    await pool.close();
    process.off('exit', killAll);
    await publisher?.flush();
  }
}

const finishedStatuses = new Set(['succeeded', 'failed', 'killed', 'cancelled', 'skipped']);

function finishRun(
  recorder: RunRecorder,
  status: 'succeeded' | 'failed' | 'cancelled',
  reason: string | undefined,
  view: LiveView,
  publisher: ServerPublisher | null,
): number {
  recorder.finish(status, reason);
  view.stop();
  const counts = new Map<string, number>();
  for (const s of recorder.run.steps) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
  const summary = [...counts].map(([k, v]) => `${v} ${k}`).join(', ');
  view.note(`run ${recorder.run.id} ${status}${reason ? ` (${reason})` : ''}: ${summary}`);
  publisher?.publish(RUN_TYPE, recorder.run.id, { recipe: recorder.run.recipe, status, reason: reason ?? null });
  return status === 'succeeded' ? ExitCode.ok : status === 'cancelled' ? ExitCode.cancelled : ExitCode.failed;
}
