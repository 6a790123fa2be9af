// One firing of a temporal recipe, from the schedule or from `temporal fire`:
// run the target as a run record, then update last run, failures and circuit,
// and notify as the recipe asks.
import { triggerActor } from '../../protocol/client-actor.ts';
import type { TemporalRecipe } from '../../recipes/types.ts';
import type { Clock } from '../clock.ts';
import { fire, type FiringResult, type Publish } from '../firing.ts';
import { notifyFiring } from '../notify.ts';
import type { TriggerStore } from '../trigger-store.ts';
import { afterFiring, shouldNotify } from './schedule.ts';

export interface TemporalContext {
  projectRoot: string;
  store: TriggerStore;
  clock: Clock;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  publish?: Publish;
  /** Stops a firing's target from outside (`temporal fire` interrupted). */
  stop?: AbortSignal;
}

export async function fireTemporal(ctx: TemporalContext, recipe: TemporalRecipe, file: string, dueMs: number): Promise<FiringResult> {
  ctx.store.patchTemporal(recipe.name, { last_run: new Date(ctx.clock.now()).toISOString() });
  const result = await fire({
    projectRoot: ctx.projectRoot,
    recipe,
    recipeFile: file,
    trigger: `temporal:${recipe.name}`,
    triggerVars: {},
    env: ctx.env,
    clock: ctx.clock,
    store: ctx.store,
    dueMs,
    ...(ctx.publish ? { publish: ctx.publish } : {}),
    ...(ctx.stop ? { stop: ctx.stop } : {}),
  });
  const ok = result.status === 'succeeded';
  const state = ctx.store.temporal(recipe.name);
  const next = ctx.store.patchTemporal(recipe.name, afterFiring(recipe, state, ok, ctx.clock.now()));
  ctx.log(`temporal ${recipe.name}: run ${result.runId} ${result.status}${result.reason ? ` (${result.reason})` : ''}`);
  if (next.circuit_broken && !state?.circuit_broken)
    ctx.log(`temporal ${recipe.name}: circuit broken after ${next.consecutive_failures} consecutive failures`);
  if (shouldNotify(recipe, ok))
    notifyFiring(ctx.log, ctx.publish, `temporal ${recipe.name} ${result.status}`, result.reason ?? `run ${result.runId}`, triggerActor('temporal', recipe.name));
  return result;
}
