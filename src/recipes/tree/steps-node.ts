// A run of a recipe whose type plans steps (sequence): prepares it, records
// it, checks its backend with the canary (once per backend in the tree), and
// runs its plan on the shared step pool. Used for the root run and for every
// child of a composite run alike.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { runActor } from '../../protocol/client-actor.ts';
import { runEventSink, stepEvents } from '../../run-events/run-events.ts';
import { describeReached } from '../budget/budget-scope.ts';
import { canaryTargets, runCanary } from '../canary.ts';
import { agentStatePaths, childEnv, createStepRunner } from '../executor/run-step.ts';
import { executePlan } from '../executor/step-executor.ts';
import { createCopyIsolation, createNoIsolation } from '../isolation/copy-modes.ts';
import type { Isolation } from '../isolation/isolation.ts';
import { stepsIsolation } from '../isolation/choose.ts';
import { createWorktreeIsolation } from '../isolation/worktree.ts';
import { type PreparedRun, prepareRun } from '../prepare-run.ts';
import { STEP_TYPE } from '../publish/server-publisher.ts';
import { RunRecorder, type RunStatus, type StepRecord } from '../records/run-record.ts';
import { runIsLive } from '../records/runs-list.ts';
import { cirStepHooks } from '../types/substrate/cir-steps.ts';
import { STEP_DEFAULTS } from '../types.ts';
import { recordStepUsage, runBudget, stepBudgets } from './budgets.ts';
import { announceRun, finishNode } from './finish.ts';
import { lastStepOutput, stepLogTail } from './output.ts';
import { runAbort } from './run-abort.ts';
import type { NodeRequest, NodeResult, TreeRuntime } from './runtime.ts';

async function createIsolation(prep: PreparedRun): Promise<Isolation> {
  const mode = stepsIsolation(prep.found.recipe);
  if (mode === 'worktree') return createWorktreeIsolation(prep.workspace, prep.runId, prep.found.file);
  if (mode === 'mirror' || mode === 'rsync') return createCopyIsolation(mode, prep.workspace, prep.projectRoot, prep.runId, prep.found.file);
  return createNoIsolation(prep.workspace);
}

export async function runStepsNode(rt: TreeRuntime, node: NodeRequest): Promise<NodeResult> {
  const { from: _f, run: _r, resume: _s, ...base } = rt.req;
  const req = {
    ...base,
    name: node.found.recipe.name,
    ...(node.from ? { from: node.from } : {}),
    ...(node.run ? { run: node.run } : {}),
    ...(node.resume ? { resume: node.resume } : {}),
  };
  const prep = prepareRun(req, {
    found: node.found,
    vars: node.vars,
    env: node.env,
    config: rt.config,
    ...(node.workspace ? { workspace: node.workspace } : {}),
    ...(node.model ? { model: node.model } : {}),
  });
  for (const w of prep.warnings) rt.stderr.write(`${w}\n`);
  const { recipe, file } = prep.found;
  const isolation = await createIsolation(prep);
  const recovered = await isolation.recover((id) => runIsLive(prep.projectRoot, id));
  for (const line of recovered) rt.view.note(line);

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
    vars: Object.keys(node.vars),
    resumed_from: prep.resume?.previous.id ?? null,
    from_label: node.from ?? null,
    parent: node.parent?.id ?? rt.req.env.VIGIL_PARENT_RUN ?? null,
    role: node.role,
    // Started by a temporal firing or sentinel reaction (src/triggers): named in the record.
    ...(!node.parent && rt.req.env.VIGIL_TRIGGER ? { trigger: rt.req.env.VIGIL_TRIGGER } : {}),
    ...(recipe.budget ? { budget: recipe.budget } : {}),
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
  rt.live.add(recorder);
  node.onStart?.(prep.runId, prep.workspace);
  rt.view.addRun(recorder, node.parent?.id ?? null, node.role);
  announceRun(rt, recorder);
  for (const s of prep.steps.values())
    for (const [path, text] of s.promptFiles) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
    }
  if (!node.parent)
    rt.view.note(`run ${prep.runId} of recipe "${recipe.name}" (${prep.plan.steps.length} steps); record in ${relative(rt.req.cwd, recorder.dir) || '.'}`);

  const abort = runAbort(node.signal);
  const controller = abort.controller;
  // --resume: the budget is run-wide, so the run starts from what the run it resumes spent.
  const budget = runBudget(rt, recorder, node.parent?.budget ?? null, controller, node.resume ? prep.resume?.previous.usage : undefined);
  const signal = controller.signal;

  // Ledger entries and plugin hooks (src/run-events/run-events.ts).
  const events = runEventSink(prep.projectRoot, rt.req.env, (l) => rt.stderr.write(`${l}\n`));
  events('run.start', { run: prep.runId, recipe: recipe.name, type: prep.plan.type, ...(node.parent ? { parent: node.parent.id } : {}) });
  const setStep = (label: string, patch: Partial<StepRecord>): void => {
    recorder.updateStep(label, patch);
    for (const [event, data] of stepEvents(prep.runId, recorder.step(label), patch)) events(event, data);
    if (patch.status) {
      const step = recorder.step(label);
      const { label: _l, output: _o, needs: _n, prompt_files: _p, ...state } = step;
      const ended = patch.status !== 'running' && patch.status !== 'pending';
      const log_tail = ended ? stepLogTail(step, recorder.dir) : null;
      rt.publisher?.publish(STEP_TYPE, `${prep.runId}/${label}`, { run: prep.runId, recipe: recipe.name, label, ...state, ...(log_tail ? { log_tail } : {}) }, runActor(prep.runId, label));
    }
  };
  const finish = (status: RunStatus, reason?: string): NodeResult => {
    abort.detach();
    budget.dispose();
    const over = budget.reachedHereOrAbove();
    const final = over && status !== 'succeeded' ? 'over_budget' : status;
    events('run.end', { run: prep.runId, recipe: recipe.name, status: final });
    return finishNode(rt, recorder, final, reason, lastStepOutput(recorder.run, recorder.dir));
  };

  try {
    for (const [label, status] of prep.resume?.preset ?? []) setStep(label, { status, reason: `succeeded in run ${prep.resume!.previous.id}` });
    const toRun = prep.plan.steps.filter((p) => !prep.resume?.preset.has(p.label));
    if (recipe.canary !== false && node.canary !== false && toRun.length > 0) {
      const vmOf = (vm: boolean) => (vm && prep.vmSpec ? { bwrap: prep.vmSpec.bwrap, writable: [prep.workspace, ...agentStatePaths()] } : null);
      const targets = canaryTargets(
        toRun.map(({ step }) => {
          const s = prep.steps.get(step.label)!;
          return { label: step.label, backendName: s.backendName, auth: step.auth, backend: s.backend, env: s.env, vm: vmOf(s.vm) };
        }),
      );
      for (const target of targets) {
        // A shell step has no agent to ask: its "backend" is /bin/sh.
        if (target.backend.kind === 'custom' && target.backend.shell) continue;
        // Once per backend in the whole tree: a hundred children of one backend check it once.
        // A custom program's canary runs without the step's args, so they do not make another backend.
        const backend = target.backend.kind === 'custom' ? { ...target.backend, args: [] } : target.backend;
        const key = JSON.stringify([target.name, backend, target.vm !== null]);
        let check = rt.canaries.get(key);
        if (!check) {
          rt.view.note(`canary: checking backend ${target.name} of step "${target.labels[0]}"…`);
          check = runCanary(
            rt.pool,
            {
              backend: target.backend,
              cwd: prep.workspace,
              env: childEnv(rt.req.env, target.env, prep.runId, 'canary', recorder.dir),
              timeoutSeconds: recipe.canary_timeout ?? STEP_DEFAULTS.canary_timeout,
              runDir: recorder.dir,
              vm: target.vm,
            },
            signal,
            (report) => budget.add(report, rt.config.prices, recordStepUsage(rt, recorder, 'canary', report)),
          );
          rt.canaries.set(key, check);
        }
        const canary = await check;
        if (signal.aborted) {
          for (const p of toRun) setStep(p.label, { status: 'cancelled', reason: 'not started: the run was cancelled' });
          return finish('cancelled', 'cancelled before the first step');
        }
        if (!canary.ok) {
          rt.stderr.write(`vigil: canary for backend ${target.name} failed: ${canary.reason}; no step was started (it serves steps ${target.labels.join(', ')})\n`);
          for (const p of toRun) setStep(p.label, { status: 'skipped', reason: 'canary failed' });
          return finish('failed', `canary failed: ${canary.reason}`);
        }
      }
    }

    const cirHooks = cirStepHooks(recipe, prep.projectRoot, recorder.dir);
    const runStep = createStepRunner({
      prep,
      baseEnv: rt.req.env,
      runDir: recorder.dir,
      isolation,
      pool: rt.pool,
      gates: rt.gates,
      step: (label) => recorder.step(label),
      setStep,
      say: (line) => rt.view.note(line),
      budgets: stepBudgets(rt, recorder, budget),
      slots: rt.slots,
      ...(cirHooks ? { hooks: cirHooks } : {}),
    });
    const result = await executePlan(
      prep.plan,
      { runStep, notRun: (s, status, reason) => setStep(s.label, { status, reason }), runsRegardless: (s) => s.condition?.checksStatus === true },
      signal,
      prep.resume?.preset,
    );
    const patterns = result.cancelled ? null : cirHooks?.complete();
    if (patterns) {
      rt.view.note(`cir: pattern detection found ${patterns.length} pattern(s) of strength ≥ ${recipe.cir?.pattern_min_strength ?? 0.5}`);
      recorder.event({ type: 'cir.patterns', patterns: patterns.map((p) => ({ id: p.id, type: p.type, body: p.body, strength: p.strength })) });
    }
    const budgetKill = recorder.run.steps.find((s) => s.killed_by === 'budget' || s.killed_by === 'minutes');
    if (budgetKill) return finish('over_budget', budgetKill.reason);
    const over = budget.reachedHereOrAbove();
    if (over && !result.ok) return finish('over_budget', describeReached(over));
    if (result.cancelled) return finish('cancelled', 'cancelled by a signal');
    return finish(result.ok ? 'succeeded' : 'failed');
  } catch (error) {
    for (const s of recorder.run.steps)
      if (s.status === 'running' || s.status === 'pending' || s.status === 'awaiting_gate') recorder.updateStep(s.label, { status: 'cancelled', reason: 'the run failed' });
    finish('failed', (error as Error).message);
    throw error;
  }
}
