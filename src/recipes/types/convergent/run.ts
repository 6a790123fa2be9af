// convergent: each of `strategies` runs the recipe in its own copy with
// STRATEGY and STRATEGIES (at most `fanout` at once); then the scorer runs
// once per succeeded strategy in that copy, with CANDIDATE_DIR. A score is the
// last line `SCORE: <n>` or a JSON object with `score`; higher wins, ties go
// to the lower strategy. The winner is merged back; the other copies are
// removed (their work kept on their branches with keep_candidates, and that of
// the strategies that succeeded when the run is cancelled). Output: the
// scoreboard and the winner.
import { disposeCopy, keptUnmerged, type StepWorkspace } from '../../isolation/isolation.ts';
import { stoppedWhy } from '../../tree/run-abort.ts';
import { type CompositeContext, type CompositeOutcome, notOfType } from '../composite.ts';
import { forEachLimited, parseScore } from '../text-results.ts';

/** Strategies when the recipe sets none (the plan says the same: check/plan-shape.ts). */
export const DEFAULT_STRATEGIES = 3;

interface Candidate {
  strategy: number;
  ws: StepWorkspace | null;
  status: string;
  score: number | null;
  note?: string;
}

export async function runConvergent(ctx: CompositeContext): Promise<CompositeOutcome> {
  const recipe = ctx.found.recipe;
  if (recipe.type !== 'convergent') return notOfType(ctx, 'convergent');
  const n = recipe.strategies ?? DEFAULT_STRATEGIES;
  const fanout = recipe.fanout ?? n;
  const candidates: Candidate[] = Array.from({ length: n }, (_, i) => ({ strategy: i + 1, ws: null, status: 'cancelled', score: null }));
  const stop = (): boolean => ctx.signal.aborted;
  ctx.planChildren(candidates.map((c) => ({ role: `strategy ${c.strategy}`, name: recipe.recipe!, vars: { STRATEGY: String(c.strategy) } })));

  await forEachLimited(n, fanout, stop, async (i) => {
    const c = candidates[i]!;
    try {
      c.ws = await ctx.isolate(`strategy-${c.strategy}`, `strategy ${c.strategy}: recipe "${recipe.recipe}" with STRATEGY=${c.strategy}`);
    } catch (error) {
      c.status = 'failed';
      c.note = (error as Error).message;
      return;
    }
    const r = await ctx.runChild({
      role: `strategy ${c.strategy}`,
      name: recipe.recipe!,
      vars: { STRATEGY: String(c.strategy), STRATEGIES: String(n) },
      workspace: c.ws.dir,
    });
    c.status = r.status;
  });

  const succeeded = candidates.filter((c) => c.status === 'succeeded' && c.ws);
  await forEachLimited(succeeded.length, fanout, stop, async (i) => {
    const c = succeeded[i]!;
    const role = `score ${c.strategy}`;
    const r = await ctx.runChild({
      role,
      name: recipe.scorer!,
      vars: { STRATEGY: String(c.strategy), STRATEGIES: String(n), CANDIDATE_DIR: c.ws!.dir },
      workspace: c.ws!.dir,
    });
    if (r.status !== 'succeeded') {
      c.note = `scorer ${r.status}`;
      return;
    }
    const score = parseScore(r.output);
    if (score instanceof Error) {
      c.note = `no valid score: ${score.message}`;
      ctx.annotateChild(role, { score: null, problem: score.message }, 'failed');
      return;
    }
    c.score = score;
    ctx.annotateChild(role, { score });
    ctx.annotateChild(`strategy ${c.strategy}`, { score });
  });

  const scored = candidates.filter((c) => c.score !== null).sort((a, b) => b.score! - a.score! || a.strategy - b.strategy);
  const winner = scored[0];
  const board = candidates
    .map((c) => `strategy ${c.strategy}\t${c.status}\tscore ${c.score ?? '-'}${c === winner ? '\twinner' : ''}${c.note ? `\t${c.note}` : ''}`)
    .join('\n');
  let outcome: CompositeOutcome;
  let conflict = false;
  let merged = false;
  if (ctx.signal.aborted) outcome = { status: 'cancelled', output: `${board}\n`, reason: stoppedWhy(ctx.signal) };
  else if (succeeded.length === 0) outcome = { status: 'failed', output: `${board}\n`, reason: 'no strategy succeeded' };
  else if (!winner) outcome = { status: 'failed', output: `${board}\n`, reason: 'no candidate got a valid score' };
  else {
    const m = await winner.ws!.bringBack();
    conflict = m.result === 'conflict';
    merged = !conflict;
    if (conflict) ctx.say(`strategy ${winner.strategy} won, but merging it back conflicts: ${m.detail ?? ''}`.trim());
    ctx.annotateChild(`strategy ${winner.strategy}`, { winner: true, merge: m.result, ...(m.branch ? { branch: m.branch } : {}) }, conflict ? 'conflict' : undefined);
    outcome = conflict
      ? { status: 'failed', output: `${board}\nwinner: strategy ${winner.strategy}\n`, reason: `strategy ${winner.strategy} won, but merging it back conflicts: ${m.detail ?? ''}`.trim() }
      : { status: 'succeeded', output: `${board}\nwinner: strategy ${winner.strategy} (score ${winner.score})\n` };
  }
  for (const c of candidates) {
    if (!c.ws) continue;
    // A run cancelled (a signal, its budget) keeps the strategies that succeeded: they stand, and --resume reuses them.
    // A cancel that came while the winner was merged found nothing left to stop: that merge ran to its end.
    const cancelledWork = ctx.signal.aborted && !merged && c.status === 'succeeded';
    const keep = (c === winner && conflict) || (c !== winner && recipe.keep_candidates === true) || cancelledWork;
    const kept = await disposeCopy(c.ws, keep, `the copy of strategy ${c.strategy}`, ctx.say);
    if (kept && cancelledWork) ctx.say(keptUnmerged(`strategy ${c.strategy}`, stoppedWhy(ctx.signal), kept));
  }
  return outcome;
}
