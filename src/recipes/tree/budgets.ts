// Budgets inside the run tree: one scope per run (its parent's scope above
// it) and one per step. A limit reached aborts what is under that scope (the
// step, or the whole run with its children), is noted, recorded, emitted on
// the product-event channel as `usage.limit_reached` and published to the
// server when one is configured.
import { emitEvent } from '../../events/channel.ts';
import { runActor } from '../../protocol/client-actor.ts';
import { linkedSignal } from '../../timing/linked-signal.ts';
import { type BudgetReached, BudgetScope, describeReached, priceOf, type Usage, unpricedWhy } from '../budget/budget-scope.ts';
import type { StepBudgets } from '../executor/run-step.ts';
import type { UsageReport } from '../pool/step-task.ts';
import type { RunRecorder, UsageRecord } from '../records/run-record.ts';
import { RunStopped } from './run-abort.ts';
import type { TreeRuntime } from './runtime.ts';

export const USAGE_TYPE = 'ai.vigil.usage.limit_reached';

function limitReached(rt: TreeRuntime, recorder: RunRecorder, step: string | null, reached: BudgetReached): void {
  const data = {
    run: recorder.run.id,
    recipe: recorder.run.recipe,
    ...(step ? { step } : {}),
    scope: reached.scope,
    limit: reached.limit,
    allowed: reached.allowed,
    used: reached.used,
    // A copy: the record goes on counting after the event is sent (the forwarder sends it later).
    usage: recorder.run.usage ? structuredClone(recorder.run.usage) : null,
  };
  rt.view.note(`${describeReached(reached)}; stopping its agents`);
  recorder.event({ type: 'usage.limit_reached', ...data });
  emitEvent('usage.limit_reached', data);
  rt.publisher?.publish(USAGE_TYPE, `${recorder.run.id}${step ? `/${step}` : ''}`, data, runActor(recorder.run.id, step ?? undefined));
}

/**
 * The run's scope: reaching its limit aborts `controller` (the run and its children). A resumed run
 * (`carried`: what the run it resumes recorded) starts from that usage.
 */
export function runBudget(rt: TreeRuntime, recorder: RunRecorder, parent: BudgetScope | null, controller: AbortController, carried?: UsageRecord): BudgetScope {
  const record: UsageRecord = { input_tokens: 0, output_tokens: 0, usd: 0, by_step: {}, ...(carried ? { carried: carriedFrom(carried, recorder.run.resumed_from) } : {}) };
  recorder.run.usage = record;
  const scope = new BudgetScope(
    `run ${recorder.run.id} ("${recorder.run.recipe}")`,
    recorder.run.budget,
    parent,
    (reached) => {
      limitReached(rt, recorder, null, reached);
      controller.abort(new RunStopped(describeReached(reached)));
    },
    // The root's at once: a runner killed with -9 leaves what the run spent on disk, for --resume to count
    // (a child's within a moment: a wide composite's children report often, and the root holds their sum).
    (usage: Usage) => recorder.updateRun({ usage: { ...record, ...usage, by_step: record.by_step } }, parent !== null),
  );
  if (carried) scope.carry(carried);
  return scope;
}

function carriedFrom(u: UsageRecord, run: string | null): NonNullable<UsageRecord['carried']> {
  return { run: run ?? '', input_tokens: u.input_tokens, output_tokens: u.output_tokens, usd: u.usd, ...(u.usd_unknown ? { usd_unknown: true as const } : {}) };
}

/** Adds a report of usage to a step's line of the run's record (`label` may be "canary"); returns why its usd is unknown, if it is. */
export function recordStepUsage(rt: TreeRuntime, recorder: RunRecorder, label: string, report: UsageReport): string | undefined {
  const usd = priceOf(report, rt.config.prices);
  const unpriced = usd === null && !report.usd_later ? (report.unpriced_why ?? unpricedWhy(report.model)) : undefined;
  const byStep = recorder.run.usage?.by_step;
  if (byStep) {
    const prev = byStep[label] ?? { input_tokens: 0, output_tokens: 0, usd: 0 };
    byStep[label] = {
      input_tokens: prev.input_tokens + report.input_tokens,
      output_tokens: prev.output_tokens + report.output_tokens,
      usd: Math.round((prev.usd + (usd ?? 0)) * 1e6) / 1e6,
      ...(prev.usd_unknown || unpriced ? { usd_unknown: true as const } : {}),
    };
  }
  return unpriced;
}

/**
 * Said once per model: an agent that reports its cost only as it ends (claude) counts $0 meanwhile unless
 * vigil.yml prices its model, so a usd limit over it cannot stop it mid-way; the user learns it at the
 * first message rather than from a run that ended far past its cap.
 */
function sayUsdSeenAtEnd(rt: TreeRuntime, label: string, report: UsageReport, scope: BudgetScope): void {
  if (!report.usd_later || priceOf(report, rt.config.prices) !== null || !scope.limitedBy('usd')) return;
  const model = report.model ?? '<model>';
  const said = `usd later: ${model}`;
  if (rt.unpricedSaid.has(said)) return;
  rt.unpricedSaid.add(said);
  rt.view.note(
    `step "${label}": its agent reports its cost only when it ends, and vigil.yml has no prices entry for model "${model}" to count its messages meanwhile: a usd budget is checked then and cannot stop it mid-way (prices: {${model}: {input_per_mtok, output_per_mtok}}, or a tokens budget)`,
  );
}

export function stepBudgets(rt: TreeRuntime, recorder: RunRecorder, runScope: BudgetScope): StepBudgets {
  return {
    begin(label, step, runSignal) {
      const own = new AbortController();
      const scope = new BudgetScope(`step "${label}" of run ${recorder.run.id}`, step.budget, runScope, (reached) => {
        recorder.updateStep(label, { budget_reached: describeReached(reached) });
        limitReached(rt, recorder, label, reached);
        own.abort();
      });
      const signal = linkedSignal([runSignal, own.signal]);
      return {
        signal: signal.signal,
        meters: () => scope.meters(),
        // The step's reader (in its worker) has counted the report already: it is recorded and read back here.
        usage(report) {
          const unpriced = recordStepUsage(rt, recorder, label, report);
          if (unpriced && !rt.unpricedSaid.has(unpriced)) {
            rt.unpricedSaid.add(unpriced);
            rt.view.note(`step "${label}": usd is unknown: ${unpriced}`);
          }
          sayUsdSeenAtEnd(rt, label, report, scope);
          scope.sync(unpriced);
        },
        reached() {
          const r = scope.reachedHereOrAbove();
          return r ? { killedBy: r.limit === 'minutes' ? 'minutes' : 'budget', reason: describeReached(r) } : null;
        },
        end() {
          signal.dispose();
          scope.dispose();
          return { ...scope.usage };
        },
      };
    },
  };
}
