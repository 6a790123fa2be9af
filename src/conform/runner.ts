// Runs checks against one base URL in parallel batches, each with its own
// time limit, and collects one result per check.
import { randomBytes } from 'node:crypto';
import type { Basis } from './basis.ts';
import { type Check, type CheckContext, CheckFailure, CheckSkipped } from './check.ts';
import { vendor as ownVendor } from '../protocol/vocabulary.ts';
import { WireClient } from './wire-client.ts';

export interface CheckResult {
  readonly id: string;
  readonly name: string;
  readonly section: string;
  /** What the check rests on, for a check of the suite (basis.ts). */
  readonly basis?: Basis;
  readonly ok: boolean;
  readonly skipped?: true;
  readonly reason: string;
  readonly ms: number;
}

export interface ConformReport {
  readonly base: string;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly checks: CheckResult[];
}

export interface RunOptions {
  readonly base: string;
  readonly adminToken?: string;
  /** The server's vendor segment; default `ai.vigil`. */
  readonly vendor?: string;
  /** Checks in flight at once. */
  readonly concurrency?: number;
  /** Only checks whose id contains one of these strings. */
  readonly only?: readonly string[];
}

const defaultTimeoutMs = 15_000;

/** Vigil's own vendor segment, the default. */
export { ownVendor };

export async function runChecks(checks: readonly (Check & { basis?: Basis })[], options: RunOptions): Promise<ConformReport> {
  const base = options.base.replace(/\/+$/, '');
  const runId = randomBytes(3).toString('hex');
  let counter = 0;
  const ctx: CheckContext = {
    base,
    http: new WireClient(base),
    vendor: options.vendor ?? ownVendor,
    adminToken: options.adminToken,
    unique: (prefix) => `${prefix}-${runId}-${(++counter).toString(36)}`,
  };
  const selected = options.only?.length ? checks.filter((c) => options.only!.some((s) => c.id.includes(s))) : checks;
  const results: CheckResult[] = new Array(selected.length);
  let next = 0;
  const worker = async () => {
    while (next < selected.length) {
      const index = next++;
      results[index] = await runOne(selected[index]!, ctx);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 12, selected.length) }, worker));
  await retireCreated(ctx.http);
  const passed = results.filter((r) => r.ok && !r.skipped).length;
  const skipped = results.filter((r) => r.skipped).length;
  return { base, passed, failed: results.length - passed - skipped, skipped, checks: results };
}

/**
 * Monitors cannot be deleted over the wire; retiring the run's `cf-*`
 * monitors is the most a black-box client can do to leave the server as it
 * found it. A monitor a check already retired answers 409: nothing to do.
 */
async function retireCreated(http: WireClient): Promise<void> {
  const batch = http.created.splice(0);
  const worker = async () => {
    for (let m = batch.pop(); m; m = batch.pop()) {
      await http.post(`/monitors/${encodeURIComponent(m.id)}/retire`, { reason: 'vigil conform finished' }, m.token).catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

async function runOne(check: Check & { basis?: Basis }, ctx: CheckContext): Promise<CheckResult> {
  const started = Date.now();
  const done = (ok: boolean, reason: string, skipped?: true): CheckResult => ({
    id: check.id,
    name: check.name,
    section: check.section,
    ...(check.basis ? { basis: check.basis } : {}),
    ok,
    ...(skipped ? { skipped } : {}),
    reason,
    ms: Date.now() - started,
  });
  const timeoutMs = check.timeoutMs ?? defaultTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailure(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    const note = await Promise.race([check.run(ctx), timeout]);
    return done(true, note ?? '');
  } catch (error) {
    if (error instanceof CheckSkipped) return done(true, `skipped: ${error.message}`, true);
    if (error instanceof CheckFailure) return done(false, error.message);
    return done(false, `${(error as Error).name}: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}
