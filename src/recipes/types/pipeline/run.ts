// pipeline: entries run in order, one at a time. `on: success` (default)
// runs an entry only while every earlier entry that ran succeeded, `failure`
// only after one failed, `always` always; the others are recorded skipped.
// The pipeline fails when any entry that ran failed. Output: the last
// entry's that ran.
import { expandPath } from '../../../paths/expand-path.ts';
import { stoppedWhy } from '../../tree/run-abort.ts';
import { type CompositeContext, type CompositeOutcome, notOfType } from '../composite.ts';

export function entryWorkspace(w: string | undefined, projectRoot: string): string | undefined {
  return w ? expandPath(w, projectRoot) : undefined;
}

export async function runPipeline(ctx: CompositeContext): Promise<CompositeOutcome> {
  const recipe = ctx.found.recipe;
  if (recipe.type !== 'pipeline') return notOfType(ctx, 'pipeline');
  const entries = recipe.sequences ?? [];
  let failed: string | null = null;
  let output = '';
  let outputFile = '';
  for (const [i, entry] of entries.entries()) {
    const role = `entry ${i + 1}`;
    if (ctx.signal.aborted) {
      ctx.skipChild(role, entry.name, `not started: ${stoppedWhy(ctx.signal)}`, 'cancelled');
      continue;
    }
    const on = entry.on ?? 'success';
    if (on === 'success' && failed) {
      ctx.skipChild(role, entry.name, `on: success, but ${failed}`);
      continue;
    }
    if (on === 'failure' && !failed) {
      ctx.skipChild(role, entry.name, 'on: failure, and no earlier entry failed');
      continue;
    }
    const workspace = entryWorkspace(entry.workspace, ctx.projectRoot);
    const r = await ctx.runChild({
      role,
      name: entry.name,
      vars: entry.vars ?? {},
      ...(workspace ? { workspace } : {}),
      ...(entry.model ? { model: entry.model } : {}),
      ...(entry.from ? { from: entry.from } : {}),
      ...(entry.pre ? { pre: entry.pre } : {}),
    });
    output = r.output;
    outputFile = r.outputFile;
    if (r.status !== 'succeeded') failed ??= `${role} ("${entry.name}") ${r.status}`;
  }
  const whole = outputFile ? { outputFile } : {};
  if (ctx.signal.aborted) return { status: 'cancelled', output, ...whole, reason: stoppedWhy(ctx.signal) };
  return failed ? { status: 'failed', output, ...whole, reason: failed } : { status: 'succeeded', output, ...whole };
}
