// What the step runner hands loop/iterations.ts for one step: how to run its
// agent on the pool, record changes, read conditions and budgets.
import { join } from 'node:path';
import type { AgentRunDeps, AgentRunState } from '../loop/iterations.ts';
import type { PlannedStep } from '../planning/plan.ts';
import type { StepOutcome, UsageReport } from '../pool/step-task.ts';
import type { StepRecord } from '../records/run-record.ts';
import { conditionContext, type StartContext } from './step-start.ts';
import { readStructuredOutput } from './structured-output.ts';

interface RunnerPart extends StartContext {
  setStep(label: string, patch: Partial<StepRecord>, note?: string): void;
  say(line: string): void;
}

export function agentRunDeps(
  ctx: RunnerPart,
  planned: PlannedStep,
  signal: AbortSignal,
  budgetReached: () => string | null,
  run: (resume: string | undefined, usage: (r: UsageReport) => void) => Promise<StepOutcome>,
): AgentRunDeps {
  const { label, step } = planned;
  return {
    label,
    step,
    outputFile: join(ctx.runDir, 'steps', `${label}.log`),
    run,
    setStep: (patch, note) => ctx.setStep(label, patch, note),
    say: (line) => ctx.say(line),
    conditions: () => conditionContext(ctx, label),
    budgetReached,
    json: (text) => {
      const r = step.output_schema ? readStructuredOutput(text, step.output_schema) : null;
      return r && 'json' in r ? r.json : null;
    },
    ...(ctx.prep.config.prices ? { prices: ctx.prep.config.prices } : {}),
    signal,
  };
}

/** A step's agent state at its start: a resumed run continues the session its step had (unless fresh_session). */
export function initialAgentState(ctx: StartContext, planned: PlannedStep): AgentRunState {
  const before = planned.step.fresh_session ? undefined : ctx.prep.resume?.previous.steps.find((s) => s.label === planned.label)?.session_id;
  return { iteration: 0, waitedMs: 0, ...(before ? { session: before } : {}) };
}
