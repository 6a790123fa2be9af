// sdk.temporal and `vigil temporal`: the trigger daemon's schedules.
//
// Seam for src/triggers: when src/triggers/sdk-temporal.ts exists and
// exports `temporalApi(ctx: SdkContext, signal: AbortSignal): TemporalApi`,
// every call goes there. Until then this module answers from the recipe
// files alone: `list` shows the temporal recipes as written, `status`
// names what it knows, and enable/disable/fire say the daemon is missing.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { discoverRecipes } from '../../recipes/loading/discovery.ts';
import type { SdkContext } from '../context.ts';
import { invalid, VigilError } from '../errors.ts';

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

export interface TemporalApi {
  list(): TemporalEntry[] | Promise<TemporalEntry[]>;
  status(name: string): TemporalEntry | Promise<TemporalEntry>;
  enable(name: string): void | Promise<void>;
  disable(name: string): void | Promise<void>;
  /** Runs the target now and returns its output; throws TIMEOUT after 600000 ms. */
  fire(name: string): string | Promise<string>;
}

const seam = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'triggers', 'sdk-temporal.ts');
let real: Promise<((ctx: SdkContext, signal: AbortSignal) => TemporalApi) | null> | undefined;

function loadReal() {
  real ??= existsSync(seam)
    ? import(pathToFileURL(seam).href).then((m: { temporalApi?: (ctx: SdkContext, signal: AbortSignal) => TemporalApi }) => m.temporalApi ?? null)
    : Promise.resolve(null);
  return real;
}

function fromRecipes(ctx: SdkContext): TemporalApi {
  const entries = (): TemporalEntry[] =>
    discoverRecipes(ctx.projectRoot)
      .recipes.filter((r) => r.recipe.type === 'temporal')
      .map((r) => {
        const t = r.recipe as unknown as { name: string; schedule?: string; target?: string; enabled?: boolean };
        return { name: t.name, schedule: t.schedule ?? '', target: t.target ?? '', enabled: t.enabled !== false, consecutive_failures: 0, circuit_broken: false };
      });
  const find = (name: string): TemporalEntry => {
    if (typeof name !== 'string' || !name) throw invalid('name', 'must be a temporal recipe name');
    const all = entries();
    const e = all.find((x) => x.name === name);
    if (!e) throw new VigilError('NOT_FOUND', all.length ? `no temporal recipe "${name}"; temporal recipes: ${all.map((x) => x.name).join(', ')}` : 'no temporal recipes in this project', { name });
    return e;
  };
  const unavailable = (name: string, what: string): never => {
    find(name);
    throw new VigilError('TEMPORAL_UNAVAILABLE', `temporal.${what}("${name}"): the trigger daemon is not part of this build`, { name });
  };
  return {
    list: entries,
    status: find,
    enable: (name) => unavailable(name, 'enable'),
    disable: (name) => unavailable(name, 'disable'),
    fire: (name) => unavailable(name, 'fire'),
  };
}

export function temporalNamespace(ctx: SdkContext, signal: AbortSignal) {
  const api = async (): Promise<TemporalApi> => ((await loadReal()) ?? (() => fromRecipes(ctx)))(ctx, signal);
  return {
    list: async () => (await api()).list(),
    status: async (name: string) => (await api()).status(name),
    enable: async (name: string) => {
      await (await api()).enable(name);
    },
    disable: async (name: string) => {
      await (await api()).disable(name);
    },
    fire: async (name: string) => (await api()).fire(name),
  };
}
