// Usage and budgets (recipes-and-sdk.md §2). Every run and every step has a
// scope, its counters in shared memory (usage-meter.ts): a step's reader
// adds each message's usage to its step's counters and every enclosing
// run's as it reads it, and kills its agent when a limit is crossed. The
// main thread reads the counters back (sync) to record them, and the first
// limit reached in a scope calls its `onReached` once (the run tree stops
// what runs under it); `minutes` is wall-clock time from the scope's start.
import type { UsageReport } from '../pool/step-task.ts';
import type { Budget } from '../types.ts';
import { addToMeter, type BudgetReached, type MeterRef, meterReached, meterReport, newMeter, type PriceTable, readMeter, toNano } from './usage-meter.ts';

export { type BudgetReached, describeReached, type PriceTable, priceOf, unpricedWhy } from './usage-meter.ts';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  /** Dollars of the usage that could be priced. */
  usd: number;
  /** Set when some usage had no price (the backend gave none and vigil.yml `prices` has no entry for its model): `usd` undercounts. */
  usd_unknown?: true;
}

export const zeroUsage = (): Usage => ({ input_tokens: 0, output_tokens: 0, usd: 0 });

export class BudgetScope {
  usage: Usage = zeroUsage();
  reached: BudgetReached | null = null;
  readonly meter: MeterRef;
  private readonly started = Date.now();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly name: string,
    readonly limits: Budget | undefined,
    readonly parent: BudgetScope | null,
    private readonly onReached: (reached: BudgetReached) => void,
    private readonly onUsage?: (usage: Usage) => void,
  ) {
    this.meter = newMeter(name, limits);
    if (limits?.minutes !== undefined) {
      this.timer = setTimeout(() => this.check(), limits.minutes * 60_000);
      this.timer.unref();
    }
  }

  /** The counters of this scope and of every scope around it, innermost first: what a step's reader adds to. */
  meters(): MeterRef[] {
    const refs: MeterRef[] = [];
    for (let s: BudgetScope | null = this; s; s = s.parent) refs.push(s.meter);
    return refs;
  }

  /** Counts usage reported on the main thread (the canary's) here and in every enclosing scope. */
  add(report: UsageReport, prices: PriceTable | undefined, unpriced?: string): void {
    meterReport(this.meters(), report, prices);
    this.sync(unpriced);
  }

  /**
   * Starts from usage an earlier run recorded (--resume). This scope only: each enclosing run carries
   * what its own earlier run recorded, which holds this one's.
   */
  carry(earlier: Usage): void {
    addToMeter(this.meter, { input_tokens: earlier.input_tokens, output_tokens: earlier.output_tokens, nanoUsd: toNano(earlier.usd), unknown: earlier.usd_unknown === true });
    this.sync();
  }

  /** Reads back what the readers counted, here and in every enclosing scope, and acts on a limit reached; `unpriced` says why usd is unknown. */
  sync(unpriced?: string): void {
    // Every scope reads its counters before any acts on a limit: what a limit reached reports of the
    // scopes around it (the run's usage in usage.limit_reached) includes the usage that reached it.
    for (let s: BudgetScope | null = this; s; s = s.parent) {
      s.usage = readMeter(s.meter);
      s.onUsage?.(s.usage);
    }
    for (let s: BudgetScope | null = this; s; s = s.parent) s.check(unpriced);
  }

  /** Whether this scope or one around it has a limit of `kind`. */
  limitedBy(kind: keyof Budget): boolean {
    for (let s: BudgetScope | null = this; s; s = s.parent) if (s.limits?.[kind] !== undefined) return true;
    return false;
  }

  /** This scope's or an enclosing scope's limit reached, if any. */
  reachedHereOrAbove(): BudgetReached | null {
    for (let s: BudgetScope | null = this; s; s = s.parent) if (s.reached) return s.reached;
    return null;
  }

  /**
   * The limit a run of this scope ends over_budget for. Its own, even when its work stood (the step
   * that crossed it finished before its kill landed): the cap was passed, and the run says so (exit 1).
   * An enclosing run's only when this run did not succeed: a run whose work stood leaves that limit to
   * the enclosing run to report.
   */
  endsOverBudget(succeeded: boolean): BudgetReached | null {
    return this.reached ?? (succeeded ? null : this.reachedHereOrAbove());
  }

  private check(unpriced?: string): void {
    if (this.reached || !this.limits) return;
    const counted = meterReached(this.meter);
    if (counted) {
      this.reach(counted.uncounted && unpriced ? { ...counted, uncounted: unpriced } : counted);
      return;
    }
    const minutes = this.limits.minutes;
    const elapsed = (Date.now() - this.started) / 60_000;
    if (minutes !== undefined && elapsed >= minutes) this.reach({ limit: 'minutes', allowed: minutes, used: Math.round(elapsed * 1e6) / 1e6, scope: this.name });
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
