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

/** A message's tokens: input counts all of it (fresh, read from the cache, written to it); the cache's parts again apart, to price. */
interface Tokens {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

const KEYS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens'] as const;
const none = (): Tokens => ({ input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 });

export function tokensOf(u: ClaudeUsage): Tokens {
  const read = num(u.cache_read_input_tokens);
  const written = num(u.cache_creation_input_tokens);
  return { input_tokens: num(u.input_tokens) + read + written, output_tokens: num(u.output_tokens), cache_read_tokens: read, cache_write_tokens: written };
}

export class ClaudeUsageCounter {
  private readonly seen = new Map<string, Tokens>();
  private readonly counted = none();
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
    const before = this.seen.get(key) ?? none();
    const now = tokensOf(usage);
    const most = none();
    const delta = none();
    for (const k of KEYS) {
      most[k] = Math.max(before[k], now[k]);
      delta[k] = most[k] - before[k];
    }
    this.seen.set(key, most);
    if (delta.input_tokens === 0 && delta.output_tokens === 0) return;
    this.report({ ...delta, usd: null, model: this.model, usd_later: true });
  }

  /** The result event: claude's own totals replace what the messages added up to. */
  result(usage: ClaudeUsage | undefined, totalCostUsd: unknown): void {
    const total = usage ? tokensOf(usage) : { ...this.counted };
    const usd = typeof totalCostUsd === 'number' ? num(totalCostUsd) - this.usd : null;
    const delta = none();
    for (const k of KEYS) delta[k] = total[k] - this.counted[k];
    const report: UsageReport = { ...delta, usd, model: this.model, final: true };
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
    this.counted.input_tokens += report.input_tokens;
    this.counted.output_tokens += report.output_tokens;
    this.counted.cache_read_tokens += report.cache_read_tokens ?? 0;
    this.counted.cache_write_tokens += report.cache_write_tokens ?? 0;
    this.ctx.usage(report);
  }
}
