// Claude Code's usage as it streams: each `assistant` event carries its
// message's usage (input, output, cache creation and cache read tokens), and
// one message may come as several events of one id, its usage repeated or
// grown. Each message is reported as it comes, by what it adds; claude
// reports no cost before its `result`, so its dollars are priced from
// vigil.yml `prices` meanwhile, and the `result` (usage and total_cost_usd of
// the whole run) reconciles what was counted with what claude says.
import { priceOf } from '../budget/usage-meter.ts';
import type { UsageReport } from '../pool/step-task.ts';
import { type AgentContext, num } from './agent-context.ts';

export interface ClaudeUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

export function tokensOf(u: ClaudeUsage): { input_tokens: number; output_tokens: number } {
  return { input_tokens: num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens), output_tokens: num(u.output_tokens) };
}

export class ClaudeUsageCounter {
  private readonly seen = new Map<string, { input_tokens: number; output_tokens: number }>();
  private input = 0;
  private output = 0;
  /** Dollars counted so far from vigil.yml prices (0 for messages whose model has none). */
  private usd = 0;
  private unpriced = false;
  private model: string | null;

  constructor(
    private readonly ctx: AgentContext,
    model: string | null,
  ) {
    this.model = model;
  }

  /** An assistant event: reports what its message adds to what was counted of it before. */
  message(id: string | undefined, model: string | undefined, usage: ClaudeUsage): void {
    if (model && model !== '<synthetic>') this.model = model;
    const key = id ?? `#${this.seen.size}`;
    const before = this.seen.get(key) ?? { input_tokens: 0, output_tokens: 0 };
    const now = tokensOf(usage);
    this.seen.set(key, { input_tokens: Math.max(before.input_tokens, now.input_tokens), output_tokens: Math.max(before.output_tokens, now.output_tokens) });
    const delta = { input_tokens: Math.max(0, now.input_tokens - before.input_tokens), output_tokens: Math.max(0, now.output_tokens - before.output_tokens) };
    if (delta.input_tokens === 0 && delta.output_tokens === 0) return;
    this.report({ ...delta, usd: null, model: this.model, usd_later: true });
  }

  /** The result event: claude's own totals replace what the messages added up to. */
  result(usage: ClaudeUsage | undefined, totalCostUsd: unknown): void {
    const total = usage ? tokensOf(usage) : { input_tokens: this.input, output_tokens: this.output };
    const usd = typeof totalCostUsd === 'number' ? num(totalCostUsd) - this.usd : null;
    const report: UsageReport = { input_tokens: total.input_tokens - this.input, output_tokens: total.output_tokens - this.output, usd, model: this.model, final: true };
    // Nothing to add when claude's figures are those already counted.
    if (report.input_tokens === 0 && report.output_tokens === 0 && (usd === null ? !this.unpriced : usd === 0)) return;
    this.report(report);
  }

  /** Claude stopped before its result: usage that no price covered stays unknown in dollars. */
  unreconciled(): void {
    if (this.unpriced)
      this.ctx.usage({
        input_tokens: 0,
        output_tokens: 0,
        usd: null,
        model: this.model,
        unpriced_why: `claude was stopped before it reported its cost, and vigil.yml has no prices entry for model "${this.model ?? '?'}" to price its messages (prices: {${this.model ?? '<model>'}: {input_per_mtok, output_per_mtok}})`,
      });
  }

  private report(report: UsageReport): void {
    const usd = priceOf(report, this.ctx.task.prices);
    if (usd === null && report.usd === null) this.unpriced = true;
    else this.usd += usd ?? 0;
    this.input += report.input_tokens;
    this.output += report.output_tokens;
    this.ctx.usage(report);
  }
}
