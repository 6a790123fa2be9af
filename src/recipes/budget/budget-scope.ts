// Usage and budgets (recipes-and-sdk.md §2). Every run and every step has a
// scope; usage a backend reports is added to the step's scope and to every
// enclosing run's, so a recipe's budget covers its children. The first
// limit reached in a scope calls its `onReached` once (the run tree kills
// the agents under it); `minutes` is wall-clock time from the scope's start.
import type { UsageReport } from '../pool/step-task.ts';
import type { Budget } from '../types.ts';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  /** Dollars of the usage that could be priced. */
  usd: number;
  /** Set when some usage had no price (the backend gave none and vigil.yml `prices` has no entry for its model): `usd` undercounts. */
  usd_unknown?: true;
}

export interface PriceTable {
  [model: string]: { input_per_mtok: number; output_per_mtok: number };
}

export interface BudgetReached {
  /** Which limit: usd, tokens or minutes. */
  limit: keyof Budget;
  /** The limit and the usage that reached it. */
  allowed: number;
  used: number;
  /** The scope whose limit it was: `run <id>` or `step <label> of run <id>`. */
  scope: string;
  /** Set when a usd limit was stopped because usage could not be priced: why. */
  uncounted?: string;
}

export const zeroUsage = (): Usage => ({ input_tokens: 0, output_tokens: 0, usd: 0 });

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** Dollars of a report: its own figure when the backend gave one, else priced from vigil.yml `prices`; null when neither knows. */
export function priceOf(report: UsageReport, prices: PriceTable | undefined): number | null {
  if (report.usd !== null) return report.usd;
  const price = report.model ? prices?.[report.model] : undefined;
  if (!price) return null;
  return (report.input_tokens * price.input_per_mtok + report.output_tokens * price.output_per_mtok) / 1_000_000;
}

export class BudgetScope {
  readonly usage: Usage = zeroUsage();
  reached: BudgetReached | null = null;
  private readonly started = Date.now();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly name: string,
    readonly limits: Budget | undefined,
    readonly parent: BudgetScope | null,
    private readonly onReached: (reached: BudgetReached) => void,
    private readonly onUsage?: (usage: Usage) => void,
  ) {
    if (limits?.minutes !== undefined) {
      this.timer = setTimeout(() => this.check(), limits.minutes * 60_000);
      this.timer.unref();
    }
  }

  /**
   * Adds usage here and in every enclosing scope, checking each one's limits. Usage without a price
   * (`unpriced` says why) makes `usd` unknown, and stops a scope with a usd limit: it can no longer be kept.
   */
  add(delta: Usage, unpriced?: string): void {
    for (let s: BudgetScope | null = this; s; s = s.parent) {
      s.usage.input_tokens += delta.input_tokens;
      s.usage.output_tokens += delta.output_tokens;
      s.usage.usd = round(s.usage.usd + delta.usd);
      if (unpriced) s.usage.usd_unknown = true;
      s.onUsage?.(s.usage);
      if (unpriced && s.limits?.usd !== undefined && !s.reached)
        s.reach({ limit: 'usd', allowed: s.limits.usd, used: s.usage.usd, scope: s.name, uncounted: unpriced });
      else s.check();
    }
  }

  /** This scope's or an enclosing scope's limit reached, if any. */
  reachedHereOrAbove(): BudgetReached | null {
    for (let s: BudgetScope | null = this; s; s = s.parent) if (s.reached) return s.reached;
    return null;
  }

  private check(): void {
    if (this.reached || !this.limits) return;
    const { usd, tokens, minutes } = this.limits;
    const totalTokens = this.usage.input_tokens + this.usage.output_tokens;
    const elapsed = (Date.now() - this.started) / 60_000;
    let hit: BudgetReached | null = null;
    if (usd !== undefined && this.usage.usd >= usd) hit = { limit: 'usd', allowed: usd, used: this.usage.usd, scope: this.name };
    else if (tokens !== undefined && totalTokens >= tokens) hit = { limit: 'tokens', allowed: tokens, used: totalTokens, scope: this.name };
    else if (minutes !== undefined && elapsed >= minutes) hit = { limit: 'minutes', allowed: minutes, used: round(elapsed), scope: this.name };
    if (hit) this.reach(hit);
  }

  private reach(hit: BudgetReached): void {
    this.reached = hit;
    this.dispose();
    this.onReached(hit);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

export function describeReached(r: BudgetReached): string {
  if (r.uncounted) return `budget cannot be kept: ${r.scope} has a usd limit of $${r.allowed}, but ${r.uncounted}`;
  const unit = r.limit === 'usd' ? ['$', ''] : r.limit === 'tokens' ? ['', ' tokens'] : ['', ' minutes'];
  return `budget reached: ${r.scope} used ${unit[0]}${r.used}${unit[1]} of ${unit[0]}${r.allowed}${unit[1]} (${r.limit})`;
}

/** Why usage of `model` has no price. */
export function unpricedWhy(model: string | null | undefined): string {
  return model
    ? `the backend reports no cost and vigil.yml has no prices entry for model "${model}" (prices: {${model}: {input_per_mtok, output_per_mtok}})`
    : 'the backend reports no cost and names no model to price from vigil.yml prices (set the step\'s "model")';
}
