// The `recipes` monitor a project's runs are published to on a Vigil server
// (vigil.yml `server: {base, token, monitor?}`), found or made: named by the
// project (`recipes of <folder>`, id `recipes-<folder>-<hash>`). Its tokens
// are kept under the user's Vigil home, keyed by project (serverCacheFile),
// never in the project's working tree.
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { withFileLockAsync } from '../../file-lock/file-lock.ts';
import { ensureProjectHome, projectHome } from '../../home/home.ts';
import { type ServerClient, ServerError } from '../../server-client/server-client.ts';
import { readJsonObject, writeJsonAtomic } from '../../json/json-file.ts';

export const RUN_TYPE = 'ai.vigil.recipe.run';
export const STEP_TYPE = 'ai.vigil.recipe.step';

/** The project's run monitor as this machine keeps it (with its tokens, under the Vigil home). */
export interface CachedMonitor {
  id: string;
  owner_token: string;
  /** The monitor's owner principal: a person's monitor is published to on the owner's behalf. */
  owner?: string;
  /** A subscription made for `vigil watch`, kept across runs so a watcher's token stays valid. */
  watch?: { subscription: string; token: string };
}

/** Publishing never holds a run for long: a server that does not answer within this counts as away. */
export const answerWithinMs = 5000;

/** The monitor as its owner reads it, or null when it is gone (or no longer ours). */
async function readMonitor(client: ServerClient, id: string, token: string): Promise<{ name?: string; owner?: string } | null> {
  try {
    // Served as the monitor itself (protocol.md §3); an envelope {monitor} is read too.
    const body = (await client.request('GET', `/monitors/${id}`, { token, timeoutMs: answerWithinMs })) as { name?: string; owner?: string; monitor?: { name?: string; owner?: string } };
    return body.monitor ?? body;
  } catch (error) {
    if (error instanceof ServerError) return null;
    throw error;
  }
}

/** The project's folder name as it may stand in a monitor id: `my-app`, at most 24 characters. */
function slugOf(projectRoot: string): string {
  return basename(projectRoot).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 24).replace(/-+$/, '') || 'project';
}

/** What the dashboard and `GET /monitors` show for this project's run monitor. */
export const monitorNameOf = (projectRoot: string): string => `recipes of ${basename(projectRoot) || projectRoot}`;

async function createMonitor(client: ServerClient, wanted: string, token: string | undefined, projectRoot: string): Promise<CachedMonitor> {
  for (const id of [wanted, `${wanted}-${Date.now().toString(16).slice(-6)}`]) {
    let body: { owner_token?: string; monitor?: { owner?: string } };
    try {
      body = await client.request('POST', '/monitors', {
        ...(token ? { token } : {}),
        timeoutMs: answerWithinMs,
        body: {
          id,
          name: monitorNameOf(projectRoot),
          description: `recipe runs of ${projectRoot}`,
          source: { kind: 'log' },
          types: [RUN_TYPE, STEP_TYPE],
          // A sentinel (watch.monitor "@runs") leases the runs it reacts to.
          capabilities: ['observe', 'act'],
          reason: 'vigil sequence publishes its runs here',
        },
      });
    } catch (error) {
      if (error instanceof ServerError && error.status === 409) continue; // taken by someone else: try a fresh id
      throw new Error(`creating monitor ${id}: ${(error as Error).message}`, { cause: error });
    }
    if (!body.owner_token) throw new Error(`creating monitor ${id}: the server's answer has no owner_token`);
    return { id, owner_token: body.owner_token, ...(body.monitor?.owner ? { owner: body.monitor.owner } : {}) };
  }
  throw new Error(`monitor id ${wanted} is taken`);
}

async function subscribe(client: ServerClient, monitor: CachedMonitor): Promise<{ subscription: string; token: string }> {
  let body: { subscription?: { id: string }; token?: string };
  try {
    body = await client.request('POST', '/subscriptions', {
      token: monitor.owner_token,
      timeoutMs: answerWithinMs,
      body: { monitor: monitor.id, subscriber: 'vigil-watch', from: 'earliest' },
    });
  } catch (error) {
    throw new Error(`subscribing to ${monitor.id}: ${(error as Error).message}`, { cause: error });
  }
  if (!body.subscription || !body.token) throw new Error(`subscribing to ${monitor.id}: the server's answer has no subscription and token`);
  return { subscription: body.subscription.id, token: body.token };
}

/** Names the monitor (best effort: a refusal leaves the old name). */
async function rename(client: ServerClient, monitor: CachedMonitor, name: string): Promise<void> {
  await client
    .request('POST', `/monitors/${monitor.id}/update`, { token: monitor.owner_token, timeoutMs: answerWithinMs, body: { reason: 'named by its project', patch: { name } } })
    .catch((error: unknown) => {
      if (!(error instanceof ServerError)) throw error;
    });
}

/** Where a project's server monitors and their tokens are kept: under the Vigil home, never in the project. */
export function serverCacheFile(projectRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(projectHome(projectRoot, env), 'server-monitors.json');
}

/** Where older versions kept it: inside the project, where `git add -A` picked the tokens up. */
const legacyCacheFile = (projectRoot: string): string => join(projectRoot, '.vigil', 'server-monitors.json');

const readCache = (file: string) => readJsonObject<CachedMonitor>(file);

function writeCache(projectRoot: string, cache: Record<string, CachedMonitor>): void {
  ensureProjectHome(projectRoot);
  const file = serverCacheFile(projectRoot);
  writeJsonAtomic(file, cache, 0o600); // it holds tokens
}

/** Moves a cache an older Vigil wrote inside the project to the Vigil home, once, and removes it from the project. */
function migrateLegacyCache(projectRoot: string, warn: (line: string) => void): void {
  const old = readCache(legacyCacheFile(projectRoot));
  if (!old) return;
  writeCache(projectRoot, { ...old, ...(readCache(serverCacheFile(projectRoot)) ?? {}) });
  rmSync(legacyCacheFile(projectRoot), { force: true });
  warn(`vigil: moved the server tokens from .vigil/server-monitors.json to ${serverCacheFile(projectRoot)} (tokens never stay in the project); if that file was ever committed, rotate them`);
}

export interface ServerConfig {
  base: string;
  token?: string;
  monitor?: string;
}

/** Where the runs of a project are published: the server (its base without a trailing slash), the project, and the client. */
export interface RunMonitorPlace {
  readonly server: ServerConfig;
  readonly base: string;
  readonly projectRoot: string;
  readonly client: ServerClient;
}

/**
 * The project's run monitor on the server: the one kept in the cache when the server still has it as
 * ours, else made (with a subscription for `vigil watch`) and kept. Throws what the server answered.
 */
export async function openRunMonitor(place: RunMonitorPlace, warn: (line: string) => void): Promise<CachedMonitor> {
  const { server, base, projectRoot, client } = place;
  const hash = createHash('sha256').update(projectRoot).digest('hex').slice(0, 8);
  const wanted = server.monitor ?? `recipes-${slugOf(projectRoot)}-${hash}`;
  // A project that published before its monitor was named by project goes on with that monitor.
  const legacy = server.monitor ? undefined : `${base}#recipes-${hash}`;
  const keyIn = (cache: Record<string, CachedMonitor>) => (legacy && !cache[`${base}#${wanted}`] && cache[legacy] ? legacy : `${base}#${wanted}`);
  /** The monitor the cache keeps, when the server still has it as ours (it may have been restarted without its state). */
  const kept = async (cache: Record<string, CachedMonitor>): Promise<CachedMonitor | null> => {
    const entry = cache[keyIn(cache)];
    const found = entry ? await readMonitor(client, entry.id, entry.owner_token) : null;
    if (!entry || !found) return null;
    if (found.owner) entry.owner = found.owner;
    // Made when every project's monitor was called "recipes": named by its project now.
    if (!server.monitor && found.name === 'recipes') await rename(client, entry, monitorNameOf(projectRoot));
    return entry;
  };
  migrateLegacyCache(projectRoot, warn);
  const first = await kept(readCache(serverCacheFile(projectRoot)) ?? {}); // empty on the first publication from this project
  if (first) return first;
  // Made under a lock: runs of one project started at once on a new server each made a monitor of their own,
  // and all but the last one kept published where no one watched.
  const lock = join(ensureProjectHome(projectRoot), 'server-monitors.lock');
  return withFileLockAsync(lock, 'TIMEOUT', async () => {
    const cache = readCache(serverCacheFile(projectRoot)) ?? {};
    const madeMeanwhile = await kept(cache);
    if (madeMeanwhile) return madeMeanwhile;
    const entry = await createMonitor(client, wanted, server.token, projectRoot);
    entry.watch = await subscribe(client, entry);
    cache[keyIn(cache)] = entry;
    writeCache(projectRoot, cache);
    return entry;
  });
}
