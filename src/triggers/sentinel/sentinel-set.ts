// The sentinels the daemon runs: one worker per enabled sentinel recipe,
// started, restarted when its file changes and stopped when it is removed.
import type { SentinelRecipe } from '../../recipes/types.ts';
import type { TemporalContext } from '../temporal/fire-temporal.ts';
import { PROJECT_RUNS, SentinelWorker } from './sentinel-worker.ts';

export interface SentinelWorkerLike {
  stop(): Promise<void>;
}

export class SentinelSet {
  private readonly workers = new Map<string, { definition: string; worker: SentinelWorkerLike }>();
  /** The enabled sentinels that watch this project's runs. */
  private runsWatchers = new Set<string>();

  constructor(
    private readonly ctx: TemporalContext,
    private readonly server: { base: string; token?: string } | undefined,
  ) {}

  set(recipes: Array<{ recipe: SentinelRecipe; file: string }>): void {
    const seen = new Set<string>();
    this.runsWatchers = new Set(recipes.filter(({ recipe }) => recipe.enabled !== false && recipe.watch.monitor === PROJECT_RUNS).map(({ recipe }) => recipe.name));
    for (const { recipe, file } of recipes) {
      if (recipe.enabled === false) continue;
      seen.add(recipe.name);
      const definition = JSON.stringify(recipe);
      const old = this.workers.get(recipe.name);
      if (old?.definition === definition) continue;
      if (old) void old.worker.stop();
      this.ctx.log(`sentinel ${recipe.name}: ${old ? 'changed' : 'loaded'} (monitor ${recipe.watch.monitor}) [${file}]`);
      this.workers.set(recipe.name, { definition, worker: this.startWorker(recipe, file) });
    }
    for (const [name, entry] of this.workers) {
      if (seen.has(name)) continue;
      void entry.worker.stop();
      this.workers.delete(name);
      this.ctx.log(`sentinel ${name}: removed`);
    }
  }

  private startWorker(recipe: SentinelRecipe, file: string): SentinelWorkerLike {
    return new SentinelWorker(this.ctx, recipe, file, this.server, (name) => this.runsWatchers.has(name));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.workers.values()].map((w) => w.worker.stop()));
    this.workers.clear();
  }
}
