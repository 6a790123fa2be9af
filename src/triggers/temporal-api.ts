// The one implementation of `vigil temporal list|status|enable|disable|fire`
// and of the SDK's `temporal` namespace. Entries are the seed's
// TemporalEntry. enable/disable write vigil.db; a running daemon reads it
// within a second. fire runs the target here and now, whatever the schedule,
// circuit or enabled state, and is recorded like any firing.
import { loadWorkspaceConfig } from '../workspace/workspace-config.ts';
import { discoverRecipes } from '../recipes/loading/discovery.ts';
import { findProjectRoot } from '../workspace/project-root.ts';
import { toolActor } from '../protocol/client-actor.ts';
import { ServerPublisher } from '../recipes/publish/server-publisher.ts';
import { ExitCode } from '../errors/exit-codes.ts';
import { RecipeInputError } from '../recipes/errors.ts';
import type { TemporalRecipe } from '../recipes/types.ts';
import { type Clock, systemClock } from './clock.ts';
import { daemonHolder } from './daemon-lock.ts';
import type { FiringResult } from './firing.ts';
import { fireTemporal } from './temporal/fire-temporal.ts';
import { isEnabled, nextRunAfter } from './temporal/schedule.ts';
import { TriggerStore } from './trigger-store.ts';

export interface TemporalEntry {
  name: string;
  schedule: string;
  target: string;
  enabled: boolean;
  last_run?: string;
  next_run?: string;
  consecutive_failures: number;
  circuit_broken: boolean;
}

export interface TemporalStatus extends TemporalEntry {
  timezone: string | null;
  mode: string;
  file: string;
  daemon: { pid: number; host: string } | null;
  circuit_broken_at: string | null;
  last_firing: { run_id: string; status: string; reason: string | null; started: string; ended: string | null } | null;
  firings: number;
  skipped: number;
}

export class TemporalTimeoutError extends Error {
  override readonly name = 'TemporalTimeoutError';
  readonly code = 'TIMEOUT';
  readonly exitCode = ExitCode.timedOut;
}

export const TEMPORAL_FIRE_TIMEOUT_MS = 600_000;

function temporalRecipes(projectRoot: string): Array<{ recipe: TemporalRecipe; file: string }> {
  return discoverRecipes(projectRoot).recipes.flatMap(({ recipe, file }) => (recipe.type === 'temporal' ? [{ recipe, file }] : []));
}

export class TemporalApi {
  readonly projectRoot: string;
  constructor(options: { cwd?: string; clock?: Clock; env?: NodeJS.ProcessEnv } = {}) {
    this.projectRoot = findProjectRoot(options.cwd);
    this.clock = options.clock ?? systemClock;
    this.env = options.env ?? process.env;
  }
  private readonly clock: Clock;
  private readonly env: NodeJS.ProcessEnv;

  private withStore<T>(fn: (store: TriggerStore) => T): T {
    const store = TriggerStore.open(this.projectRoot);
    try {
      return fn(store);
    } finally {
      store.close();
    }
  }

  private find(name: string): { recipe: TemporalRecipe; file: string } {
    const all = temporalRecipes(this.projectRoot);
    const found = all.find((r) => r.recipe.name === name);
    if (!found)
      throw new RecipeInputError(`no temporal recipe named "${name}"${all.length ? `; temporal recipes: ${all.map((r) => r.recipe.name).join(', ')}` : ' (none in this project or ~/.vigil/recipes)'}`);
    return found;
  }

  private entry(store: TriggerStore, recipe: TemporalRecipe): TemporalEntry {
    const state = store.temporal(recipe.name);
    const enabled = isEnabled(recipe, state);
    let next = state?.next_run ?? undefined;
    if (enabled && (!next || Date.parse(next) <= this.clock.now())) {
      const n = nextRunAfter(recipe, this.clock.now());
      next = n === null ? undefined : new Date(n).toISOString();
    }
    return {
      name: recipe.name,
      schedule: recipe.schedule,
      target: recipe.target,
      enabled,
      ...(state?.last_run ? { last_run: state.last_run } : {}),
      ...(enabled && next ? { next_run: next } : {}),
      consecutive_failures: state?.consecutive_failures ?? 0,
      circuit_broken: state?.circuit_broken === 1,
    };
  }

  list(): TemporalEntry[] {
    return this.withStore((store) => temporalRecipes(this.projectRoot).map((r) => this.entry(store, r.recipe)));
  }

  status(name: string): TemporalStatus {
    const { recipe, file } = this.find(name);
    return this.withStore((store) => {
      const firings = store.firings(name);
      const ran = firings.filter((f) => f.status !== 'skipped');
      const last = ran.at(-1);
      const state = store.temporal(name);
      const holder = daemonHolder(this.projectRoot);
      return {
        ...this.entry(store, recipe),
        timezone: recipe.timezone ?? null,
        mode: recipe.mode ?? 'recipe',
        file,
        daemon: holder ? { pid: holder.pid, host: holder.host } : null,
        circuit_broken_at: state?.broken_at_ms ? new Date(state.broken_at_ms).toISOString() : null,
        last_firing: last
          ? { run_id: last.run_id, status: last.status, reason: last.reason, started: new Date(last.started_ms).toISOString(), ended: last.ended_ms ? new Date(last.ended_ms).toISOString() : null }
          : null,
        firings: ran.length,
        skipped: firings.length - ran.length,
      };
    });
  }

  enable(name: string): void {
    this.find(name);
    this.withStore((store) => store.patchTemporal(name, { enabled: 1 }));
  }

  disable(name: string): void {
    this.find(name);
    this.withStore((store) => store.patchTemporal(name, { enabled: 0 }));
  }

  /** Runs the target now; resolves with its output, rejects with TemporalTimeoutError after `timeoutMs`. */
  async fire(name: string, options: { timeoutMs?: number; log?: (line: string) => void; stop?: AbortSignal } = {}): Promise<FiringResult> {
    const { recipe, file } = this.find(name);
    const timeoutMs = options.timeoutMs ?? TEMPORAL_FIRE_TIMEOUT_MS;
    const store = TriggerStore.open(this.projectRoot);
    // The firing's own ttl is capped by the call's timeout, so the target is killed when the call gives up.
    const capped = { ...recipe, ttl: Math.min(recipe.ttl ?? 600, timeoutMs / 1000), on_ttl_expire: (recipe.ttl ?? 600) * 1000 >= timeoutMs ? ('fail' as const) : recipe.on_ttl_expire };
    const log = options.log ?? (() => {});
    // Like the daemon's firings, a manual one shows in `vigil watch` when vigil.yml names a server.
    const server = loadWorkspaceConfig(this.projectRoot).server;
    const publisher = server ? await ServerPublisher.connect(server, this.projectRoot, log, toolActor('vigil-temporal-fire'), { keepTrying: true, keepUnpublished: true }) : null;
    try {
      const result = await fireTemporal(
        {
          projectRoot: this.projectRoot,
          store,
          clock: this.clock,
          env: this.env,
          log,
          ...(options.stop ? { stop: options.stop } : {}),
          ...(publisher ? { publish: (type: string, subject: string, data: Record<string, unknown>, actor?: string) => publisher.publish(type, subject, data, actor) } : {}),
        },
        capped,
        file,
        this.clock.now(),
      );
      if (result.reason?.startsWith('killed after its ttl') && capped.ttl * 1000 >= timeoutMs)
        throw new TemporalTimeoutError(`temporal.fire("${name}") did not finish within ${timeoutMs} ms; its target was killed (run ${result.runId})`);
      return result;
    } finally {
      await publisher?.flush();
      store.close();
    }
  }
}
