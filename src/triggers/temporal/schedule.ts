// The temporal policy as data (recipes-and-sdk.md §3): when the next firing
// is due, and whether a due firing runs or is skipped (disabled, circuit
// open, cooldown, overlap). Pure: time comes in as numbers.
import { Cron } from 'croner';
import type { TemporalRecipe } from '../../recipes/types.ts';
import { TRIGGER_DEFAULTS } from '../../recipes/types/trigger-fields.ts';
import type { TemporalState } from '../trigger-store.ts';

/** The first time the schedule fires strictly after `afterMs`, or null when it never fires again. */
export function nextRunAfter(recipe: Pick<TemporalRecipe, 'schedule' | 'timezone'>, afterMs: number): number | null {
  const cron = new Cron(recipe.schedule, { paused: true, ...(recipe.timezone ? { timezone: recipe.timezone } : {}) });
  const next = cron.nextRun(new Date(afterMs));
  return next ? next.getTime() : null;
}

export function isEnabled(recipe: TemporalRecipe, state: TemporalState | undefined): boolean {
  if (state && state.enabled !== null) return state.enabled === 1;
  return recipe.enabled ?? TRIGGER_DEFAULTS.enabled;
}

export type SkipReason = 'circuit_open' | 'cooldown' | 'overlap';

/** Whether a firing due now runs; a skipped one is recorded with the reason. */
export function admit(recipe: TemporalRecipe, state: TemporalState | undefined, nowMs: number, running: boolean): SkipReason | null {
  if (running) return 'overlap';
  if (state?.circuit_broken) {
    const reset = (recipe.circuit_breaker_reset_ttl ?? TRIGGER_DEFAULTS.circuit_breaker_reset_ttl) * 1000;
    if (state.broken_at_ms !== null && nowMs - state.broken_at_ms < reset) return 'circuit_open';
  }
  const cooldown = (recipe.cooldown ?? TRIGGER_DEFAULTS.cooldown) * 1000;
  if (cooldown > 0 && state?.last_end_ms != null && nowMs - state.last_end_ms < cooldown) return 'cooldown';
  return null;
}

/** The state after a firing ended: success closes the circuit; failures count and may break it. */
export function afterFiring(
  recipe: Pick<TemporalRecipe, 'circuit_breaker_threshold'>,
  state: TemporalState | undefined,
  ok: boolean,
  endMs: number,
): Pick<TemporalState, 'consecutive_failures' | 'circuit_broken' | 'broken_at_ms' | 'last_end_ms'> {
  if (ok) return { consecutive_failures: 0, circuit_broken: 0, broken_at_ms: null, last_end_ms: endMs };
  const failures = (state?.consecutive_failures ?? 0) + 1;
  const threshold = recipe.circuit_breaker_threshold ?? TRIGGER_DEFAULTS.circuit_breaker_threshold;
  const broken = state?.circuit_broken === 1 || (threshold > 0 && failures >= threshold);
  return { consecutive_failures: failures, circuit_broken: broken ? 1 : 0, broken_at_ms: broken ? endMs : null, last_end_ms: endMs };
}

export function shouldNotify(recipe: TemporalRecipe | { notify?: 'never' | 'failure' | 'always' }, ok: boolean): boolean {
  const notify = recipe.notify ?? TRIGGER_DEFAULTS.notify;
  return notify === 'always' || (notify === 'failure' && !ok);
}
