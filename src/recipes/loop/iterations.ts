// Runs a step's agent until the step is done with it: once, or (with `loop`)
// again and again until the loop's condition holds or max_iterations stops
// it; each time continuing the agent's session unless fresh_session, and
// waiting out a provider's usage limit (then continuing the same session)
// instead of failing. The step runner (executor/run-step.ts) calls it once
// per attempt; the state it keeps carries over retries.
import { appendFileSync, closeSync, fstatSync, openSync } from 'node:fs';
import { priceOf, type PriceTable } from '../budget/budget-scope.ts';
import { type ConditionContext, conditionHolds } from '../executor/conditions.ts';
import { OUTPUT_LIMIT, readTail } from '../executor/step-outputs.ts';
import type { StepOutcome, UsageReport } from '../pool/step-task.ts';
import type { LoopRecord, StepRecord } from '../records/run-record.ts';
import { describeLeft } from '../sessions/durations.ts';
import { describeWait, planWait, systemClock, type WaitClock, waitUntil } from '../sessions/usage-wait.ts';
import type { RecipeStep } from '../types.ts';
import { describeUntil, hasWholeLine, type LoopSpec, loopOf, usageLimitWaitMs } from './loop-spec.ts';

export interface AgentRunState {
  /** The agent's last session id: what the next run continues. */
  session?: string;
  /** Iterations run so far (a loop's count carries over retries: max_iterations is a hard stop). */
  iteration: number;
  /** Milliseconds waited on usage limits so far (usage_limit_wait bounds them all). */
  waitedMs: number;
  loop?: LoopRecord;
}

export interface AgentRunDeps {
  label: string;
  step: RecipeStep;
  /** The step's log (absolute), which every run appends to. */
  outputFile: string;
  /** Runs the agent once on the pool, continuing `resume` when given; `usage` sees each report. */
  run(resume: string | undefined, usage: (r: UsageReport) => void): Promise<StepOutcome>;
  setStep(patch: Partial<StepRecord>, note?: string): void;
  say(line: string): void;
  /** What `until: {if: …}` reads besides this step (the step's `if:` context). */
  conditions(): ConditionContext;
  /** Why a budget stopped the step, or null. */
  budgetReached(): string | null;
  /** This step's structured output from an iteration's text, when it has an output_schema. */
  json(text: string): unknown;
  prices?: PriceTable;
  signal: AbortSignal;
  clock?: WaitClock;
}

export async function runAgent(d: AgentRunDeps, s: AgentRunState): Promise<StepOutcome> {
  const loop = loopOf(d.step);
  const clock = d.clock ?? systemClock;
  const allowanceMs = usageLimitWaitMs(d.step);
  let limited = false;
  let usage = zeroUsage();
  for (;;) {
    if (!limited) {
      usage = zeroUsage();
      if (loop) startIteration(d, s, loop);
    }
    const resume = limited || !d.step.fresh_session ? s.session : undefined;
    const offset = sizeOf(d.outputFile);
    const outcome = await d.run(resume, (r) => addUsage(usage, r, d.prices));
    if (outcome.session && outcome.session !== s.session) {
      s.session = outcome.session;
      d.setStep({ session_id: s.session });
    }
    if (outcome.usageLimit && outcome.status === 'failed' && !d.signal.aborted) {
      const limit = outcome.usageLimit;
      const now = clock.now();
      const plan = planWait(limit, now, allowanceMs - s.waitedMs, describeLeft(allowanceMs), limited);
      if ('refused' in plan) return endLoop(d, s, { ...outcome, reason: plan.refused }, usage, plan.refused);
      const waiting = describeWait(limit.provider, plan.until, now);
      d.say(`step "${d.label}": ${limit.message}; ${waiting}, then continuing its session`);
      d.setStep({ waiting: { for: 'usage_limit', provider: limit.provider, until: new Date(plan.until).toISOString(), message: limit.message } }, waiting);
      const waited = await waitUntil(clock, plan.until, d.signal);
      s.waitedMs += Math.max(0, clock.now() - now);
      d.setStep({ waiting: null });
      if (!waited) return endLoop(d, s, { ...outcome, status: 'cancelled', reason: `cancelled while waiting for the ${limit.provider} usage limit to reset` }, usage, 'cancelled');
      limited = true;
      continue;
    }
    limited = false;
    if (!loop) return outcome;
    recordIteration(d, s, outcome, usage);
    const over = d.budgetReached();
    if (over || d.signal.aborted) return endLoop(d, s, outcome, null, over ?? 'cancelled');
    // An iteration the agent did not finish ends the loop (retry may run it again); a build that fails is a reason to go on.
    if (outcome.status !== 'succeeded' && outcome.build !== 'failed')
      return endLoop(d, s, outcome, null, `iteration ${s.iteration} ${outcome.status}: ${'reason' in outcome ? outcome.reason : ''}`);
    if (outcome.status === 'succeeded' && untilHolds(d, loop, outcome, readTail(d.outputFile, OUTPUT_LIMIT, offset)))
      return endLoop(d, s, outcome, null, `${describeUntil(loop.until)} held after ${s.iteration} iteration${s.iteration === 1 ? '' : 's'}`);
    if (s.iteration >= loop.maxIterations) {
      const why = `loop: max_iterations (${loop.maxIterations}) reached without ${describeUntil(loop.until)}`;
      return endLoop(d, s, { ...outcome, status: 'failed', reason: why }, null, `max_iterations (${loop.maxIterations})`);
    }
    const notYet = 'reason' in outcome ? outcome.reason : `${describeUntil(loop.until)} not yet`;
    d.say(`step "${d.label}": iteration ${s.iteration} of ${loop.maxIterations}: ${notYet}; running it again${resumeNote(d, s)}`);
  }
}

function startIteration(d: AgentRunDeps, s: AgentRunState, loop: LoopSpec): void {
  s.iteration += 1;
  s.loop ??= { iteration: 0, max_iterations: loop.maxIterations, until: describeUntil(loop.until), iterations: [] };
  s.loop.iteration = s.iteration;
  // Later steps read the last iteration's output (${steps.<label>.output}), as they read a retried step's last attempt.
  if (s.iteration > 1) appendFileSync(d.outputFile, `\n--- iteration ${s.iteration} of ${loop.maxIterations} ---\n`);
  const from = s.iteration > 1 ? { attempt_offset: sizeOf(d.outputFile) } : {};
  d.setStep({ loop: { ...s.loop, iterations: [...s.loop.iterations] }, ...from });
}

function recordIteration(d: AgentRunDeps, s: AgentRunState, outcome: StepOutcome, usage: UsageAcc): void {
  const entry: LoopRecord['iterations'][number] = {
    n: s.iteration,
    status: outcome.status,
    ...('reason' in outcome ? { reason: outcome.reason } : {}),
    ...(outcome.build ? { build: outcome.build } : {}),
    usage: { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, usd: Math.round(usage.usd * 1e6) / 1e6, ...(usage.unknown ? { usd_unknown: true as const } : {}) },
    ended: new Date().toISOString(),
  };
  s.loop!.iterations.push(entry);
  d.setStep({ loop: { ...s.loop!, iterations: [...s.loop!.iterations] } });
}

/** Records why the loop stopped (and a usage-limited run's usage as an iteration of its own when it never finished). */
function endLoop(d: AgentRunDeps, s: AgentRunState, outcome: StepOutcome, pendingUsage: UsageAcc | null, stopped: string): StepOutcome {
  if (!s.loop) return outcome;
  if (pendingUsage) recordIteration(d, s, outcome, pendingUsage);
  s.loop.stopped = stopped;
  d.setStep({ loop: { ...s.loop, iterations: [...s.loop.iterations] } });
  return outcome;
}

function untilHolds(d: AgentRunDeps, loop: LoopSpec, outcome: StepOutcome, text: string): boolean {
  const u = loop.until;
  if (u.kind === 'build') return outcome.build === 'passed' || !d.step.build_command;
  if (u.kind === 'line') return hasWholeLine(outcome.finalText ?? text, u.line);
  const base = d.conditions();
  // The iteration's log, with the agent's final message where the log does not already hold it (claude's result).
  const said = outcome.finalText && !text.includes(outcome.finalText) ? `${text}\n${outcome.finalText}` : text;
  const own = { status: outcome.status, output: said.trimEnd(), json: d.step.output_schema ? d.json(said) : null };
  const ctx: ConditionContext = { ...base, step: (l) => (l === d.label ? own : base.step(l)) };
  return conditionHolds(u.condition, ctx);
}

function resumeNote(d: AgentRunDeps, s: AgentRunState): string {
  if (d.step.fresh_session) return ' in a fresh session';
  return s.session ? ` in session ${s.session}` : '';
}

interface UsageAcc {
  input_tokens: number;
  output_tokens: number;
  usd: number;
  unknown: boolean;
}

const zeroUsage = (): UsageAcc => ({ input_tokens: 0, output_tokens: 0, usd: 0, unknown: false });

function addUsage(acc: UsageAcc, r: UsageReport, prices: PriceTable | undefined): void {
  acc.input_tokens += r.input_tokens;
  acc.output_tokens += r.output_tokens;
  const usd = priceOf(r, prices);
  // As the budget meters count it: a cost the backend reports at its end (usd_later) is not unknown before then.
  if (usd === null) acc.unknown ||= !r.usd_later;
  else acc.usd += usd;
}

function sizeOf(path: string): number {
  try {
    const fd = openSync(path, 'r');
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  } catch {
    return 0;
  }
}
