// parallel: one child run of `recipe` per variable set, at most `fanout` at
// once, each in its own copy of the workspace (a git worktree on branch
// vigil/<run id>/<index>, else a mirror copy; transfer_mode "none" shares
// it). Succeeded children are merged back one at a time in index order; a
// conflicting merge is aborted and that child is `conflict`, its branch kept.
// fail_fast cancels the others at the first failure. Output: one line per child.
import { sharedController } from '../../../timing/shared-controller.ts';
import { disposeCopy, keptUnmerged, type StepWorkspace } from '../../isolation/isolation.ts';
import { RunStopped, stoppedWhy } from '../../tree/run-abort.ts';
import { type ChildResult, type CompositeContext, type CompositeOutcome, notOfType } from '../composite.ts';
import { forEachLimited } from '../text-results.ts';

interface ChildRun {
  role: string;
  ws: StepWorkspace | null;
  result: ChildResult;
  merge?: string;
}

/** Why the children fail_fast stopped did not start (or were cancelled): another child failed. */
const FAIL_FAST = new RunStopped('fail_fast after a failure');

export async function runParallel(ctx: CompositeContext): Promise<CompositeOutcome> {
  const recipe = ctx.found.recipe;
  if (recipe.type !== 'parallel') return notOfType(ctx, 'parallel');
  const sets = recipe.vars ?? [];
  const name = recipe.recipe!;
  const count = sets.length;
  // Every running child listens on it.
  const failFast = sharedController();
  const runs: Array<ChildRun | undefined> = new Array(count);
  ctx.planChildren(sets.map((vars, i) => ({ role: `child ${i}`, name, vars })));

  await forEachLimited(
    count,
    Math.min(recipe.fanout ?? 4, 64),
    () => ctx.signal.aborted || failFast.signal.aborted,
    async (i) => {
      const role = `child ${i}`;
      let ws: StepWorkspace | null = null;
      try {
        ws = await ctx.isolate(String(i), `child ${i}: recipe "${name}"${Object.entries(sets[i] ?? {}).map(([k, v], j) => `${j === 0 ? ' with ' : ' '}${k}=${v}`).join('')}`);
      } catch (error) {
        ctx.skipChild(role, name, `could not make its copy of the workspace: ${(error as Error).message}`, 'cancelled');
        runs[i] = { role, ws: null, result: { runId: null, status: 'failed', output: '', outputFile: '', reason: (error as Error).message } };
        if (recipe.fail_fast) failFast.abort(FAIL_FAST);
        return;
      }
      const result = await ctx.runChild({
        role,
        name,
        vars: { ...sets[i]!, PARALLEL_INDEX: String(i), PARALLEL_COUNT: String(count) },
        workspace: ws.dir,
        signal: failFast.signal,
      });
      runs[i] = { role, ws, result };
      if (result.status !== 'succeeded' && recipe.fail_fast && !failFast.signal.aborted) {
        ctx.say(`child ${i} ${result.status}; fail_fast: cancelling the other children`);
        failFast.abort(FAIL_FAST);
      }
    },
  );

  // Merge back in index order, then remove the copies (a conflicting child keeps its branch).
  for (const [i, run] of runs.entries()) {
    if (!run) {
      ctx.skipChild(`child ${i}`, name, `not started: ${stoppedWhy(ctx.signal.aborted ? ctx.signal : failFast.signal)}`, 'cancelled');
      continue;
    }
    if (!run.ws) continue;
    let conflict = false;
    if (run.result.status === 'succeeded' && !ctx.signal.aborted) {
      try {
        const m = await run.ws.bringBack();
        conflict = m.result === 'conflict';
        if (conflict) ctx.say(`child ${i}: merging its work conflicts: ${m.detail ?? ''}`.trim());
        run.merge = m.result;
        ctx.annotateChild(run.role, { merge: m.result, ...(m.branch ? { branch: m.branch } : {}), ...(m.detail ? { detail: m.detail } : {}) }, conflict ? 'conflict' : undefined);
      } catch (error) {
        run.merge = 'failed';
        ctx.annotateChild(run.role, { merge: 'failed', detail: (error as Error).message }, 'failed');
      }
    }
    // Work done before a cancel (a signal, the run's budget) is not merged, but kept on its branch (or in its copy);
    // a merge the cancel came during runs to its end, and that child is merged.
    const unmerged = run.result.status === 'succeeded' && run.merge === undefined && ctx.signal.aborted;
    const kept = await disposeCopy(run.ws, conflict || unmerged, `the copy of child ${i}`, ctx.say);
    if (unmerged) {
      ctx.annotateChild(run.role, { merge: `not merged: ${stoppedWhy(ctx.signal)}`, ...(kept ?? {}) });
      if (kept) ctx.say(keptUnmerged(`child ${i}`, stoppedWhy(ctx.signal), kept));
    }
  }

  const lines = runs.map((run, i) => {
    const vars = Object.entries(sets[i] ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    if (!run) return `child ${i}\tcancelled\t${vars}`;
    const status = run.merge === 'conflict' ? 'conflict' : run.merge === 'failed' ? 'failed' : run.result.status;
    return `child ${i}\t${status}\t${vars}\t${run.result.runId ?? '-'}${run.merge ? `\t${run.merge}` : ''}`;
  });
  const output = `${lines.join('\n')}\n`;
  if (ctx.signal.aborted) return { status: 'cancelled', output, reason: stoppedWhy(ctx.signal) };
  const bad = runs.map((r, i) => [r, i] as const).filter(([r]) => r?.result.status !== 'succeeded' || r.merge === 'conflict' || r.merge === 'failed');
  if (bad.length > 0) {
    const what = bad.map(([r, i]) => `child ${i} ${!r ? 'cancelled' : r.merge === 'conflict' ? 'conflict' : r.merge === 'failed' ? 'merge failed' : r.result.status}`);
    return { status: 'failed', output, reason: what.join(', ') };
  }
  return { status: 'succeeded', output };
}
