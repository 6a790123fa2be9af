// adversarial: in one isolated copy of the workspace, each round runs blue
// (builds or defends), red (attacks), then the judge, each with ROUND, ROUNDS
// and the latest outputs of the sides as BLUE_OUTPUT, RED_OUTPUT,
// JUDGE_OUTPUT. The judge's verdict is the last JSON object with `winner` in
// its output; `done: true` ends the contest early. The run succeeds when the
// last verdict's winner is blue, and only then is the copy merged back.
// Output: the verdicts, one line per round.
import { disposeCopy, keptWhere, type StepWorkspace } from '../../isolation/isolation.ts';
import { stoppedWhy } from '../../tree/run-abort.ts';
import { type CompositeContext, type CompositeOutcome, notOfType } from '../composite.ts';
import { parseVerdict, type Verdict } from '../text-results.ts';

/** Rounds when the recipe sets none (the plan says the same: check/plan-shape.ts). */
export const DEFAULT_ROUNDS = 3;

export async function runAdversarial(ctx: CompositeContext): Promise<CompositeOutcome> {
  const recipe = ctx.found.recipe;
  if (recipe.type !== 'adversarial') return notOfType(ctx, 'adversarial');
  const rounds = recipe.rounds ?? DEFAULT_ROUNDS;
  const sides = { blue: recipe.blue, red: recipe.red, judge: recipe.judge };
  const outputs = { BLUE_OUTPUT: '', RED_OUTPUT: '', JUDGE_OUTPUT: '' };
  const verdicts: Array<Verdict & { round: number }> = [];
  const lines = (): string => verdicts.map((v) => `round ${v.round}: ${v.winner}${v.score !== undefined ? ` (score ${v.score})` : ''} — ${v.reason}`).join('\n');
  let ws: StepWorkspace;
  try {
    ws = await ctx.isolate('contest', `the contest of blue "${sides.blue.recipe}", red "${sides.red.recipe}" and judge "${sides.judge.recipe}"`);
  } catch (error) {
    return { status: 'failed', output: '', reason: `could not make the contest's copy of the workspace: ${(error as Error).message}` };
  }
  let failure: CompositeOutcome | null = null;
  let merged = false;
  // The copy's work is kept when blue won but its merge conflicts, and when the run was cancelled (a signal, its
  // budget): the rounds that succeeded stand (--resume reuses them), so their work stays for it to go on from.
  let keep = false;
  try {
    for (let round = 1; round <= rounds && !failure; round += 1) {
      for (const side of ['blue', 'red', 'judge'] as const) {
        const role = `${side} round ${round}`;
        const r = await ctx.runChild({
          role,
          name: sides[side].recipe,
          vars: { ...(sides[side].vars ?? {}), ROUND: String(round), ROUNDS: String(rounds), ...outputs },
          workspace: ws.dir,
        });
        if (r.status !== 'succeeded') {
          failure = { status: r.status === 'cancelled' ? 'cancelled' : 'failed', output: lines(), reason: `${role} ("${sides[side].recipe}") ${r.status}` };
          break;
        }
        outputs[`${side.toUpperCase() as 'BLUE' | 'RED' | 'JUDGE'}_OUTPUT`] = r.outputFile;
        if (side !== 'judge') continue;
        const verdict = parseVerdict(r.output);
        if (verdict instanceof Error) {
          ctx.annotateChild(role, { verdict: null, problem: verdict.message }, 'failed');
          failure = { status: 'failed', output: lines(), reason: `round ${round}: the judge "${sides.judge.recipe}" gave no valid verdict: ${verdict.message}` };
          break;
        }
        ctx.annotateChild(role, { verdict });
        verdicts.push({ ...verdict, round });
        ctx.say(`round ${round}: ${verdict.winner} — ${verdict.reason}`);
      }
      if (verdicts.at(-1)?.round === round && verdicts.at(-1)?.done) break;
    }
    if (failure) {
      keep = ctx.signal.aborted;
      return failure;
    }
    const last = verdicts.at(-1)!;
    if (last.winner !== 'blue') return { status: 'failed', output: lines(), reason: `the last verdict (round ${last.round}) went to ${last.winner}: ${last.reason}` };
    const m = await ws.bringBack();
    if (m.result === 'conflict') {
      keep = true;
      ctx.say(`blue won, but merging its work back conflicts: ${m.detail ?? ''}`.trim());
      return { status: 'failed', output: lines(), reason: `blue won, but merging its work back conflicts: ${m.detail ?? ''}`.trim() };
    }
    merged = m.result === 'merged';
    return { status: 'succeeded', output: `${lines()}\nblue won${merged ? "; its work is in the run's results" : ''}\n` };
  } finally {
    const kept = await disposeCopy(ws, keep, "the contest's copy", ctx.say);
    if (kept && ctx.signal.aborted) ctx.say(`the contest stopped (${stoppedWhy(ctx.signal)}): its work so far is kept ${keptWhere(kept)}`);
  }
}
