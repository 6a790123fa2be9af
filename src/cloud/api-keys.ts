// API keys of the cloud API: `vk_` + 32 random bytes, shown once when made
// and kept only as a SHA-256 hash. Made, listed and revoked with the admin
// token; every /v1 route resolves its caller's key here. A key is scoped at
// creation to the monitors it may trigger: a list of ids, or `"*"` for every
// monitor only when the administrator asks for it in so many words.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { invalid, notFound, unauthorized } from '../protocol/errors.ts';
import type { CloudRows } from './cloud-rows.ts';
import type { ApiKeyTable } from './cloud-store.ts';

export interface ApiKeyInfo {
  id: string;
  name: string;
  created_at: string;
  revoked: boolean;
  /** The monitors the key may trigger: their ids, or `"*"` for every monitor. */
  monitors: string[] | '*';
}

const maxScopedMonitors = 1000;

const hashOf = (key: string) => createHash('sha256').update(key).digest('hex');

const infoOf = (row: ApiKeyTable): ApiKeyInfo => ({
  id: row.id,
  name: row.name,
  created_at: row.created_at,
  revoked: row.revoked_at !== null,
  monitors: scopeOf(row),
});

/** The key's trigger scope as stored; anything unreadable scopes it to nothing. */
export function scopeOf(row: ApiKeyTable): string[] | '*' {
  try {
    const parsed = JSON.parse(row.monitors) as unknown;
    if (parsed === '*') return '*';
    return Array.isArray(parsed) ? parsed.filter((m): m is string => typeof m === 'string') : [];
  } catch {
    return [];
  }
}

/** Whether the key may trigger this monitor. */
export function mayTrigger(row: ApiKeyTable, monitor: string): boolean {
  const scope = scopeOf(row);
  return scope === '*' || scope.includes(monitor);
}

function scopeInput(value: unknown): string[] | '*' {
  if (value === undefined) return [];
  if (value === '*') return '*';
  const problem = `"monitors" must be a list of monitor ids the key may trigger (at most ${maxScopedMonitors}), or "*" for every monitor; got ${JSON.stringify(value).slice(0, 80)}.`;
  if (!Array.isArray(value) || value.length > maxScopedMonitors) throw invalid(problem, { field: 'monitors' });
  for (const id of value) {
    if (typeof id !== 'string' || id.length === 0 || id.length > 200) throw invalid(problem, { field: 'monitors' });
    if (id === '*') throw invalid('"monitors": "*" stands alone (every monitor); send "monitors": "*" rather than a list holding it.', { field: 'monitors' });
  }
  return [...new Set(value as string[])];
}

export async function createApiKey(store: CloudRows, input: Record<string, unknown>): Promise<ApiKeyInfo & { key: string }> {
  const name = input.name ?? 'default';
  if (typeof name !== 'string' || name.length === 0 || name.length > 100) {
    throw invalid('"name" must be text of 1 to 100 characters.', { field: 'name' });
  }
  const monitors = scopeInput(input.monitors);
  const key = `vk_${randomBytes(32).toString('base64url')}`;
  const row: ApiKeyTable = {
    id: `key_${randomUUID()}`,
    name,
    hash: hashOf(key),
    created_at: new Date().toISOString(),
    revoked_at: null,
    monitors: JSON.stringify(monitors),
  };
  await store.putKey(row);
  return { ...infoOf(row), key };
}

export async function listApiKeys(store: CloudRows): Promise<ApiKeyInfo[]> {
  return (await store.keys()).map(infoOf);
}

export async function revokeApiKey(store: CloudRows, id: string): Promise<{ revoked: boolean }> {
  const row = await store.keyById(id);
  if (!row) throw notFound(`No API key "${id}".`);
  if (row.revoked_at === null) await store.putKey({ ...row, revoked_at: new Date().toISOString() });
  return { revoked: true };
}

/** The key a bearer token names; missing, unknown and revoked keys are refused alike. */
export async function authenticate(store: CloudRows, bearer: string | undefined): Promise<ApiKeyTable> {
  if (!bearer) throw unauthorized('The cloud API needs an API key: send "Authorization: Bearer vk_..." (make one with `vigil api-key create`).');
  const row = bearer.startsWith('vk_') ? await store.keyByHash(hashOf(bearer)) : undefined;
  if (!row || row.revoked_at !== null) throw unauthorized('This API key is not valid on this server (unknown or revoked).');
  return row;
}
