// Keeps one timer per enabled temporal recipe on the injected clock. At its
// time a firing is admitted or skipped (and recorded), delayed by jitter, and
// run; then the next time is armed. next_run is stored, so a daemon started
// later knows which firings it missed (catch_up).
import type { TemporalRecipe } from '../../recipes/types.ts';
import { newRunId } from '../../recipes/records/run-record.ts';
import { fireTemporal, type TemporalContext } from './fire-temporal.ts';
import { admit, isEnabled, nextRunAfter } from './schedule.ts';

interface Entry {
  recipe: TemporalRecipe;
  file: string;
  definition: string;
  timer: unknown;
  /** As last armed; undefined until the first arming. */
  enabled: boolean | undefined;
  running: Promise<unknown> | null;
}

export class TemporalScheduler {
  private readonly entries = new Map<string, Entry>();
  private stopped = false;

  constructor(private readonly ctx: TemporalContext, private readonly random: () => number = Math.random) {}

  /** Replaces the set of temporal recipes: new ones start, changed ones re-arm, removed ones stop. */
  set(recipes: Array<{ recipe: TemporalRecipe; file: string }>, starting = false): void {
    const seen = new Set<string>();
    for (const { recipe, file } of recipes) {
      seen.add(recipe.name);
      const definition = JSON.stringify(recipe);
      const old = this.entries.get(recipe.name);
      if (old && old.definition === definition) continue;
      if (old) this.ctx.clock.clearTimeout(old.timer);
      const entry: Entry = { recipe, file, definition, timer: undefined, enabled: old?.enabled, running: old?.running ?? null };
      this.entries.set(recipe.name, entry);
      this.ctx.log(`temporal ${recipe.name}: ${old ? 'changed' : 'loaded'} (${recipe.schedule}${recipe.timezone ? ` ${recipe.timezone}` : ''})`);
      this.arm(entry, starting || !old);
    }
    for (const [name, entry] of this.entries) {
      if (seen.has(name)) continue;
      this.ctx.clock.clearTimeout(entry.timer);
      this.entries.delete(name);
      this.ctx.store.patchTemporal(name, { next_run: null });
      this.ctx.log(`temporal ${name}: removed`);
    }
  }

  /** Re-reads enabled flags (temporal enable/disable write them) and arms or disarms. */
  refreshEnabled(): void {
    for (const entry of this.entries.values()) {
      const enabled = isEnabled(entry.recipe, this.ctx.store.temporal(entry.recipe.name));
      if (enabled !== entry.enabled) this.arm(entry, false);
    }
  }

  private arm(entry: Entry, starting: boolean): void {
    this.ctx.clock.clearTimeout(entry.timer);
    entry.timer = undefined;
    const { recipe } = entry;
    const state = this.ctx.store.temporal(recipe.name);
    const enabled = isEnabled(recipe, state);
    // Said here, not only where the flags are polled: re-arming after a firing may be the first to see a change.
    if (entry.enabled !== undefined && enabled !== entry.enabled) this.ctx.log(`temporal ${recipe.name}: ${enabled ? 'enabled' : 'disabled'}`);
    entry.enabled = enabled;
    if (!enabled || this.stopped) {
      this.ctx.store.patchTemporal(recipe.name, { next_run: null });
      return;
    }
    const now = this.ctx.clock.now();
    const stored = state?.next_run ? Date.parse(state.next_run) : null;
    if (starting && stored !== null && stored <= now) {
      // Missed while no daemon ran.
      if ((recipe.catch_up ?? 'skip') === 'once') {
        this.ctx.log(`temporal ${recipe.name}: catching up one firing missed at ${state!.next_run}`);
        this.due(entry, stored);
        return;
      }
      this.recordSkip(recipe.name, stored, 'missed');
    }
    const next = nextRunAfter(recipe, now);
    this.ctx.store.patchTemporal(recipe.name, { next_run: next === null ? null : new Date(next).toISOString() });
    if (next === null) return;
    entry.timer = this.ctx.clock.setTimeout(() => this.due(entry, next), next - now);
  }

  private due(entry: Entry, dueMs: number): void {
    if (this.entries.get(entry.recipe.name) !== entry || this.stopped) return;
    const { recipe } = entry;
    const skip = admit(recipe, this.ctx.store.temporal(recipe.name), this.ctx.clock.now(), entry.running !== null);
    if (skip) {
      this.recordSkip(recipe.name, dueMs, skip);
      this.ctx.log(`temporal ${recipe.name}: firing due ${new Date(dueMs).toISOString()} skipped (${skip})`);
    } else {
      const jitterMs = Math.floor(this.random() * (recipe.jitter ?? 0) * 1000);
      entry.running = new Promise<void>((resolve) => {
        const start = (): void => {
          fireTemporal(this.ctx, recipe, entry.file, dueMs)
            .catch((error: Error) => this.ctx.log(`temporal ${recipe.name}: firing failed to run: ${error.message}`))
            .finally(() => {
              entry.running = null;
              resolve();
            });
        };
        if (jitterMs > 0) this.ctx.clock.setTimeout(start, jitterMs);
        else start();
      });
    }
    this.rearmAfter(entry);
  }

  private rearmAfter(entry: Entry): void {
    if (this.entries.get(entry.recipe.name) === entry) this.arm(entry, false);
  }

  private recordSkip(name: string, dueMs: number, reason: string): void {
    const now = this.ctx.clock.now();
    this.ctx.store.addFiring({ run_id: `skip-${newRunId(new Date(now))}`, trigger: `temporal:${name}`, recipe: name, due_ms: dueMs, status: 'skipped', pid: null, started_ms: now, ended_ms: now, reason });
  }

  /** Resolves when every running firing has ended. */
  async idle(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.running));
  }

  stop(): void {
    this.stopped = true;
    for (const entry of this.entries.values()) this.ctx.clock.clearTimeout(entry.timer);
  }
}
