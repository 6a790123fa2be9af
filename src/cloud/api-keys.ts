// API keys of the cloud API: `vk_` + 32 random bytes, shown once when made
// and kept only as a SHA-256 hash. Made, listed and revoked with the admin
// token; every /v1 route resolves its caller's key here.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { invalid, notFound, unauthorized } from '../protocol/errors.ts';
import type { CloudRows } from './cloud-rows.ts';
import type { ApiKeyTable } from './cloud-store.ts';

export interface ApiKeyInfo {
  id: string;
  name: string;
  created_at: string;
  revoked: boolean;
}

const hashOf = (key: string) => createHash('sha256').update(key).digest('hex');

const infoOf = (row: ApiKeyTable): ApiKeyInfo => ({
  id: row.id,
  name: row.name,
  created_at: row.created_at,
  revoked: row.revoked_at !== null,
});

export async function createApiKey(store: CloudRows, input: Record<string, unknown>): Promise<ApiKeyInfo & { key: string }> {
  const name = input.name ?? 'default';
  if (typeof name !== 'string' || name.length === 0 || name.length > 100) {
    throw invalid('"name" must be text of 1 to 100 characters.', { field: 'name' });
  }
  const key = `vk_${randomBytes(32).toString('base64url')}`;
  const row: ApiKeyTable = { id: `key_${randomUUID()}`, name, hash: hashOf(key), created_at: new Date().toISOString(), revoked_at: null };
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
