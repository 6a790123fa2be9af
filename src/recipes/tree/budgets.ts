// Budgets inside the run tree: one scope per run (its parent's scope above
// it) and one per step. A limit reached aborts what is under that scope (the
// step, or the whole run with its children), is noted, recorded, emitted on
// the product-event channel as `usage.limit_reached` and published to the
// server when one is configured.
import { emitEvent } from '../../events/channel.ts';
import { runActor } from '../../protocol/client-actor.ts';
import { type BudgetReached, BudgetScope, describeReached, priceOf, type Usage, unpricedWhy } from '../budget/budget-scope.ts';
import type { StepBudgets } from '../executor/run-step.ts';
import type { RunRecorder, UsageRecord } from '../records/run-record.ts';
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
    usage: recorder.run.usage ?? null,
  };
  rt.view.note(`${describeReached(reached)}; stopping its agents`);
  recorder.event({ type: 'usage.limit_reached', ...data });
  emitEvent('usage.limit_reached', data);
  rt.publisher?.publish(USAGE_TYPE, `${recorder.run.id}${step ? `/${step}` : ''}`, data, runActor(recorder.run.id, step ?? undefined));
}

/** The run's scope: reaching its limit aborts `controller` (the run and its children). */
export function runBudget(rt: TreeRuntime, recorder: RunRecorder, parent: BudgetScope | null, controller: AbortController): BudgetScope {
  const record: UsageRecord = { input_tokens: 0, output_tokens: 0, usd: 0, by_step: {} };
  recorder.run.usage = record;
  return new BudgetScope(
    `run ${recorder.run.id} ("${recorder.run.recipe}")`,
    recorder.run.budget,
    parent,
    (reached) => {
      limitReached(rt, recorder, null, reached);
      controller.abort();
    },
    (usage: Usage) => recorder.updateRun({ usage: { ...record, ...usage, by_step: record.by_step } }, true),
  );
}

export function stepBudgets(rt: TreeRuntime, recorder: RunRecorder, runScope: BudgetScope): StepBudgets {
  return {
    begin(label, step, runSignal) {
      const own = new AbortController();
      let warned = false;
      const scope = new BudgetScope(`step "${label}" of run ${recorder.run.id}`, step.budget, runScope, (reached) => {
        limitReached(rt, recorder, label, reached);
        own.abort();
      });
      return {
        signal: AbortSignal.any([runSignal, own.signal]),
        usage(report) {
          const usd = priceOf(report, rt.config.prices);
          const delta = { input_tokens: report.input_tokens, output_tokens: report.output_tokens, usd: usd ?? 0 };
          const unpriced = usd === null ? unpricedWhy(report.model) : undefined;
          if (unpriced && !warned) {
            warned = true;
            rt.view.note(`step "${label}": usd is unknown: ${unpriced}`);
          }
          const byStep = recorder.run.usage?.by_step;
          if (byStep) {
            const prev = byStep[label] ?? { input_tokens: 0, output_tokens: 0, usd: 0 };
            byStep[label] = {
              input_tokens: prev.input_tokens + delta.input_tokens,
              output_tokens: prev.output_tokens + delta.output_tokens,
              usd: Math.round((prev.usd + delta.usd) * 1e6) / 1e6,
              ...(prev.usd_unknown || unpriced ? { usd_unknown: true as const } : {}),
            };
          }
          scope.add(delta, unpriced);
        },
        reached() {
          const r = scope.reachedHereOrAbove();
          return r ? describeReached(r) : null;
        },
        end() {
          scope.dispose();
          return { ...scope.usage };
        },
      };
    },
  };
}
