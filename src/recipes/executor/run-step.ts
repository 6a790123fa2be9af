// Runs one step of a plan to its end: its isolated directory, the agent on
// the pool (again when a reviewer asks for a retry), the review gate, the
// merge back, and the record of each change. The executor calls it once per
// step; what it returns decides the fate of the steps that wait for it.
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { type AgentSlots, withSlots } from '../concurrency/agent-slots.ts';
import type { GateKeeper } from '../gates/gate.ts';
import { gateVerdict } from '../gates/gate.ts';
import { disposeCopy, type Isolation, keptWhere, type StepWorkspace } from '../isolation/isolation.ts';
import type { PlannedStep } from '../planning/plan.ts';
import type { StepPool } from '../pool/step-pool.ts';
import type { StepOutcome, UsageReport } from '../pool/step-task.ts';
import type { PreparedRun } from '../prepare-run.ts';
import type { StepRecord } from '../records/run-record.ts';
import { type RecipeStep, STEP_DEFAULTS } from '../types.ts';
import { runAgent } from '../loop/iterations.ts';
import { agentRunDeps, initialAgentState } from './agent-run-deps.ts';
import { conditionHolds } from './conditions.ts';
import type { FinalStatus } from './step-executor.ts';
import { lastAttempt } from './step-outputs.ts';
import { conditionContext, type StepInput, stepInput } from './step-start.ts';
import { sleep } from '../../timing/sleep.ts';
import { readHeldOutput } from '../tree/output.ts';
import { stoppedWhy } from '../tree/run-abort.ts';
import { readStructuredOutput } from './structured-output.ts';
import { changedOutside, snapshotTree } from '../isolation/clean-outside.ts';

export interface StepRunnerContext {
  prep: PreparedRun;
  baseEnv: NodeJS.ProcessEnv;
  runDir: string;
  isolation: Isolation;
  pool: StepPool;
  gates: GateKeeper;
  step(label: string): StepRecord;
  /** Records a change of the step (run.json, events, view, server). */
  setStep(label: string, patch: Partial<StepRecord>): void;
  say(line: string): void;
  /** Budgets of steps (and the runs around them); absent: no budget is kept. */
  budgets?: StepBudgets;
  /** Work around each step (the recipe's `cir` block): extra environment before, captures after. */
  hooks?: StepHooks;
  /** The concurrency caps: the agent starts once it holds its slots (the wait is not part of its timeout). */
  slots?: AgentSlots | null;
}

export interface StepHooks {
  before(label: string): Record<string, string>;
  after(label: string, succeeded: boolean, output: string): Promise<number>;
}

/** A step's budget while it runs: its own cancellation, the usage it reports, and whether a limit stopped it. */
export interface StepBudget {
  signal: AbortSignal;
  /** The shared counters its reader adds to (the step's, then each run's around it). */
  meters(): Array<{ buffer: SharedArrayBuffer; scope: string }>;
  /** A report the reader counted: recorded, and the counters read back. */
  usage(report: UsageReport): void;
  /** The limit reached in the step's scope or above it, or null: `budget` (tokens, usd) or `minutes`. */
  reached(): { killedBy: 'budget' | 'minutes'; reason: string } | null;
  /** Ends the step's scope; returns its usage for the record. */
  end(): { input_tokens: number; output_tokens: number; usd: number; usd_unknown?: true };
}

export interface StepBudgets {
  begin(label: string, step: RecipeStep, runSignal: AbortSignal): StepBudget;
}

export function createStepRunner(ctx: StepRunnerContext): (planned: PlannedStep, signal: AbortSignal) => Promise<FinalStatus> {
  const { prep, setStep } = ctx;
  return async (planned: PlannedStep, runSignal: AbortSignal): Promise<FinalStatus> => {
    const { label, step } = planned;
    if (planned.condition && !conditionHolds(planned.condition, conditionContext(ctx, label))) {
      setStep(label, { status: 'skipped', reason: `if: ${planned.condition.source} was false` });
      return 'skipped';
    }
    const budget = ctx.budgets?.begin(label, step, runSignal);
    const signal = budget?.signal ?? runSignal;
    const outputRel = join('steps', `${label}.log`);
    setStep(label, { status: 'running', started: new Date().toISOString(), output_file: outputRel, ...(step.retry ? { attempts: 1 } : {}) });
    // The final state is recorded once, with the end time and the output, in `finally`.
    let final: Partial<StepRecord> & { status: FinalStatus } = { status: 'failed', reason: 'the step did not finish' };
    let ws: StepWorkspace | null = null;
    try {
      const extraEnv = ctx.hooks?.before(label) ?? {};
      ws = await ctx.isolation.prepare(label, step.dir ?? '.');
      const input = stepInput(ctx, planned);
      const attempts = step.retry?.attempts ?? 1;
      let attempt = 1;
      // The agent's session and a loop's iterations carry over retries and gate retries.
      const agent = initialAgentState(ctx, planned);
      const workspace = ws;
      const run = (resume: string | undefined, usage: (r: UsageReport) => void) => runOnPool(ctx, planned, workspace, signal, extraEnv, budget, input, { resume, usage });
      for (;;) {
        const before = step.clean_outside ? await snapshotTree(workspace.dir) : null;
        let outcome = await runAgent(agentRunDeps(ctx, planned, signal, () => budget?.reached()?.reason ?? null, run), agent);
        if (outcome.status === 'succeeded' && step.clean_outside) {
          const after = await snapshotTree(workspace.dir);
          const outside = before && after ? await changedOutside(workspace.dir, before, after, step.clean_outside) : null;
          const why = !outside ? 'the step does not work in a git repository' : outside.length > 0 ? `it changed ${outside.slice(0, 10).join(', ')}${outside.length > 10 ? ` and ${outside.length - 10} more` : ''}` : null;
          if (why) outcome = { status: 'failed', phases: outcome.phases, exitCode: outcome.exitCode, reason: `verify.git_clean_outside (${step.clean_outside.join(', ')}): ${why}` };
        }
        if (outcome.status === 'succeeded' && step.output_schema) {
          const structured = readStructuredOutput(readOutput(join(ctx.runDir, outputRel), ctx.step(label).attempt_offset), step.output_schema);
          if ('error' in structured) outcome = { status: 'failed', phases: outcome.phases, exitCode: outcome.exitCode, reason: structured.error };
          else setStep(label, { json: structured.json });
        }
        // Cancelled before its agent started (its wait for a slot ended by the run's budget or a signal): it did not
        // run, so it is cancelled, not killed, and says why.
        if (outcome.status === 'cancelled' && outcome.notStarted) {
          const stoppedBy = budget?.reached()?.reason;
          final = { status: 'cancelled', phase: 0, phases: 0, exit_code: null, reason: `not started: ${stoppedBy ?? stoppedWhy(signal)}` };
          break;
        }
        // A limit that stopped the agent is its end; an agent that finished before (its last message tipped the budget) stands, and the run stops after it.
        const overBudget = outcome.status === 'succeeded' ? null : (budget?.reached() ?? (outcome.status === 'killed' && outcome.killedBy === 'budget' ? { killedBy: 'budget' as const, reason: outcome.reason } : null));
        if (overBudget) {
          final = { status: 'killed', killed_by: overBudget.killedBy, phase: outcome.phases, phases: outcome.phases, exit_code: outcome.exitCode, reason: overBudget.reason };
          break;
        }
        if ((outcome.status === 'failed' || outcome.status === 'killed') && attempt < attempts && !signal.aborted) {
          const wait = (step.retry?.backoff_s ?? 0) * 2 ** (attempt - 1);
          const why = `attempt ${attempt} of ${attempts} ${outcome.status}: ${outcome.reason ?? 'no reason given'}`;
          ctx.say(`step "${label}": ${why}; retrying${wait > 0 ? ` in ${wait}s` : ''}`);
          setStep(label, { attempts: attempt + 1, phase: 0, reason: why, attempt_offset: markAttempt(join(ctx.runDir, outputRel), attempt + 1, attempts) });
          if (!(await sleep(wait * 1000, signal))) {
            final = { status: 'cancelled', reason: `cancelled while waiting to retry (${why})` };
            break;
          }
          attempt += 1;
          continue;
        }
        if (outcome.status !== 'succeeded') {
          const killed = outcome.status === 'killed' ? { killed_by: outcome.killedBy } : outcome.status === 'failed' && outcome.limit ? { killed_by: outcome.limit } : {};
          // A cancelled agent says what stopped its run (a signal, a budget above it, fail_fast).
          const reason = outcome.status === 'cancelled' ? stoppedWhy(signal) : outcome.reason;
          final = { status: outcome.status, phase: outcome.phases, phases: outcome.phases, exit_code: outcome.exitCode, reason, ...killed };
          break;
        }
        setStep(label, { phase: outcome.phases, phases: outcome.phases, exit_code: outcome.exitCode });
        if (step.gate === 'review') {
          const options = step.gate_options ?? [...STEP_DEFAULTS.gate_options];
          const defaultAction = step.gate_action ?? null;
          setStep(label, { status: 'awaiting_gate', gate: { options, default_action: defaultAction } });
          const choice = await ctx.gates.decide({ runId: prep.runId, runDir: ctx.runDir, label, dir: ws.dir, options, defaultAction, timeoutSeconds: step.gate_timeout, signal });
          if (!choice) {
            final = { status: 'cancelled', reason: 'cancelled at the review gate' };
            break;
          }
          const gate = { options, default_action: defaultAction, choice: choice.choice, chosen_by: choice.by };
          const verdict = gateVerdict(choice.choice);
          if (verdict === 'retry') {
            setStep(label, { status: 'running', gate, phase: 0 });
            continue;
          }
          if (verdict === 'reject') {
            final = { status: 'failed', gate, reason: `rejected at the review gate (${choice.choice}, by ${choice.by})` };
            break;
          }
          setStep(label, { gate });
        }
        const merge = await ws.bringBack();
        final =
          merge.result === 'conflict'
            ? {
                status: 'conflict',
                reason: merge.detail ?? 'merge conflict',
                merge: { branch: merge.branch ?? '', result: 'conflict', ...(merge.detail ? { detail: merge.detail } : {}) },
              }
            : { status: 'succeeded', ...(merge.branch ? { merge: { branch: merge.branch, result: merge.result } } : {}) };
        break;
      }
    } catch (error) {
      final = { status: 'failed', reason: (error as Error).message };
    } finally {
      if (step.continue_on_error && (final.status === 'failed' || final.status === 'killed')) final = { ...final, continued: true };
      // A step stopped from outside (a signal, a budget, a watchdog) keeps what its copy holds, as it would in the
      // workspace itself: --resume goes on from it, continuing the agent's session.
      const stopped = final.status === 'killed' || final.status === 'cancelled';
      const kept = ws ? await disposeCopy(ws, final.status === 'conflict' || stopped, `the isolated copy of "${label}"`, ctx.say) : null;
      if (kept && stopped) ctx.say(`step "${label}" was stopped: its work so far is kept ${keptWhere(kept)}`);
      const usage = budget?.end();
      setStep(label, {
        ...final,
        // A step that ended while it waited for a slot (its run stopped, the slots' server gone) waits no more.
        ...(ctx.step(label).slot_wait ? { slot_wait: null } : {}),
        ended: new Date().toISOString(),
        ...(usage ? { usage } : {}),
        ...persistOutput(ctx.runDir, outputRel, step.outputPersistenceThreshold),
      });
    }
    if (ctx.hooks) {
      const record = ctx.step(label);
      const output = record.output !== undefined ? lastAttempt(record.output, record.attempt_offset) : record.output_file ? readOutput(join(ctx.runDir, record.output_file), record.attempt_offset) : '';
      const captured = await ctx.hooks.after(label, final.status === 'succeeded', output).catch((e: Error) => {
        ctx.say(`cir: could not capture the signals of "${label}": ${e.message}`);
        return 0;
      });
      if (captured > 0) ctx.say(`cir: captured ${captured} signal(s) from step "${label}"`);
    }
    return final.status;
  };
}


/** Starts a retry's part of the step's log with a line of its own; returns where its output starts (every attempt stays in the log). */
function markAttempt(path: string, attempt: number, attempts: number): number {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, `\n--- attempt ${attempt} of ${attempts} ---\n`);
  return statSync(path).size;
}

/** A step's log, from `from` (a byte offset: where the last attempt starts) on: its last HELD_OUTPUT_BYTES when longer. */
function readOutput(path: string, from = 0): string {
  return readHeldOutput(path, from).text;
}

function runOnPool(
  ctx: StepRunnerContext,
  planned: PlannedStep,
  ws: StepWorkspace,
  signal: AbortSignal,
  extraEnv: Record<string, string>,
  budget: StepBudget | undefined,
  input: StepInput,
  agent: { resume: string | undefined; usage(r: UsageReport): void },
): Promise<StepOutcome> {
  const { prep } = ctx;
  const { label, step } = planned;
  const prepared = prep.steps.get(label)!;
  const onWait = (wait: string | null): void => ctx.setStep(label, { slot_wait: wait });
  return withSlots(ctx.slots, { backend: prepared.backendName, who: { run: prep.runId, step: label }, signal, onWait }, () => ctx.pool.run(
    {
      kind: 'step',
      label,
      cwd: ws.dir,
      env: { ...childEnv(ctx.baseEnv, prepared.env, prep.runId, label, ctx.runDir), ...extraEnv, ...input.env },
      backend: input.backend,
      prompt: input.prompt,
      ...(input.outputSchema ? { outputSchema: input.outputSchema } : {}),
      ...(step.completion_keyword ? { completionKeyword: step.completion_keyword } : {}),
      maxPhases: step.max_phases ?? STEP_DEFAULTS.max_phases,
      timeoutMs: (step.timeout ?? STEP_DEFAULTS.timeout) * 1000,
      inactivityMs: (step.inactivity_timeout ?? prep.config.inactivity_timeout ?? STEP_DEFAULTS.inactivity_timeout) * 1000,
      ...(step.build_command ? { buildCommand: step.build_command } : {}),
      vm: prepared.vm && prep.vmSpec ? { bwrap: prep.vmSpec.bwrap, writable: [ws.root, ...agentStatePaths()] } : null,
      outputFile: join(ctx.runDir, 'steps', `${label}.log`),
      ...(budget ? { meters: budget.meters() } : {}),
      ...(prep.config.prices ? { prices: prep.config.prices } : {}),
      ...(agent.resume ? { resumeSession: agent.resume } : {}),
    },
    (m) => {
      if (m.type === 'phase' && ctx.step(label).status === 'running') ctx.setStep(label, { phase: m.phase });
      else if (m.type === 'usage') {
        budget?.usage(m.usage);
        agent.usage(m.usage);
      } else if (m.type === 'session') ctx.setStep(label, { session_id: m.session });
    },
    signal,
  ));
}

/** The environment of a step's programs: the runner's, the step's variables, and the run's identity. */
export function childEnv(base: NodeJS.ProcessEnv, stepEnv: Record<string, string>, runId: string, label: string, runDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  return { ...env, ...stepEnv, VIGIL_RUN_ID: runId, VIGIL_STEP: label, VIGIL_RUN_DIR: runDir };
}

/** Output at or below the step's outputPersistenceThreshold is kept inline in run.json; above it, in the file. */
function persistOutput(runDir: string, rel: string, threshold: number | undefined): Partial<StepRecord> {
  const path = join(runDir, rel);
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    mkdirSync(dirname(path), { recursive: true });
    return { output_bytes: 0, output_file: null, output: '' };
  }
  if (threshold !== undefined && size <= threshold) {
    const output = readFileSync(path, 'utf8');
    unlinkSync(path);
    return { output_bytes: size, output_file: null, output };
  }
  return { output_bytes: size, output_file: rel };
}

/** Where agent CLIs keep their login and session state: writable inside the sandbox too, or they cannot start. */
export function agentStatePaths(): string[] {
  return ['.claude', '.claude.json', '.codex'].map((p) => join(homedir(), p)).filter((p) => existsSync(p));
}
