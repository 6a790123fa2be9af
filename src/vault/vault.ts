// The vault: secrets by scope (service `vigil-vault/<scope>`) and key, in the
// OS keyring where one answers and persists (keyring-store.ts: on Linux the
// Secret Service only), else in the encrypted file (file-store.ts). Secrets
// earlier versions left in Linux's in-memory keyutils store are moved into
// the file on first use (keyutils-rescue.ts).
// VIGIL_VAULT_BACKEND=file|keyring forces a backend; with VIGIL_HOME set the
// default is the file, so tests and sandboxes never write the real keyring.
// A plaintext ~/.vigil/vault.json from earlier versions is moved into the
// active backend on first use and then removed.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { invalid, VigilError } from '../errors/vigil-error.ts';
import { vigilHome } from '../home/home.ts';
import { filePaths, readVaultFile, updateVaultFile, type VaultData } from './file-store.ts';
import { keyringEntry as persistentEntry, knownScopes, probeKeyring, rememberScope } from './keyring-store.ts';
import { type Rescue, rescueKeyutilsSecrets } from './keyutils-rescue.ts';

export interface ScopeOption {
  scope?: string;
}

export type VaultBackendName = 'keyring' | 'file';

const SCOPE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** The most characters a vault value holds. */
export const MAX_VALUE = 64 * 1024;

export const serviceOf = (scope: string): string => `vigil-vault/${scope}`;

function checkScope(scope: unknown): string {
  if (scope === undefined || scope === null) return 'default';
  if (typeof scope !== 'string' || !SCOPE.test(scope)) {
    throw invalid('scope', `must be 1-64 letters, digits, ".", "_" or "-" starting with a letter or digit; got ${JSON.stringify(scope)}`);
  }
  return scope;
}

function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > 256 || /[\s/\u0000-\u001f]/.test(key)) {
    throw invalid('key', `must be 1-256 characters without spaces, "/" or control characters; got ${JSON.stringify(key)}`);
  }
  return key;
}

export function vaultBackend(env: NodeJS.ProcessEnv = process.env): VaultBackendName {
  const forced = env.VIGIL_VAULT_BACKEND;
  if (forced === 'file') return 'file';
  if (forced === 'keyring') {
    const { keyring, reason } = probeKeyring();
    if (!keyring) throw new VigilError('VAULT_UNAVAILABLE', `VIGIL_VAULT_BACKEND=keyring but the OS keyring does not answer: ${reason}`);
    return 'keyring';
  }
  if (forced !== undefined && forced !== '' && forced !== 'auto') {
    throw invalid('VIGIL_VAULT_BACKEND', `takes file, keyring or auto; got "${forced}"`);
  }
  if (env.VIGIL_HOME) return 'file';
  return probeKeyring().keyring ? 'keyring' : 'file';
}

let lastMigration: { from: string; keys: number } | null = null;
let migratedFor: string | null = null;

function migrate(env: NodeJS.ProcessEnv, backend: VaultBackendName): void {
  const home = vigilHome(env);
  if (migratedFor === home) return;
  migratedFor = home;
  const legacy = join(home, 'vault.json');
  if (!existsSync(legacy)) return;
  let data: VaultData;
  try {
    data = JSON.parse(readFileSync(legacy, 'utf8')) as VaultData;
  } catch (error) {
    throw new VigilError('VAULT_UNAVAILABLE', `cannot migrate ${legacy}: ${(error as Error).message}; fix or remove it`);
  }
  let keys = 0;
  const put = (target: VaultData | null): void => {
    for (const [service, entries] of Object.entries(data)) {
      if (!service.startsWith('vigil-vault/') || typeof entries !== 'object' || entries === null) continue;
      const scope = service.slice('vigil-vault/'.length);
      for (const [key, value] of Object.entries(entries)) {
        if (typeof value !== 'string') continue;
        keys += 1;
        if (target) {
          target[service] ??= {};
          target[service][key] ??= value;
        } else if (rawGet(backend, env, scope, key) === null) rawSet(backend, env, scope, key, value);
      }
    }
  };
  if (backend === 'file') updateVaultFile(filePaths(env), (d) => put(d));
  else put(null);
  rmSync(legacy, { force: true });
  lastMigration = { from: legacy, keys };
}

/** The migration of a plaintext vault.json done by this process, once, for the CLI to report. */
export function takeMigrationNote(): { from: string; keys: number } | null {
  const note = lastMigration;
  lastMigration = null;
  return note;
}

function keyringEntry(scope: string, key: string) {
  return persistentEntry(serviceOf(scope), key);
}

let lastRescue: Rescue | null = null;
let rescuedFor: string | null = null;

/** Secrets in Linux's keyutils (lost at reboot) into the file vault, once; not in a VIGIL_HOME sandbox, which must not touch the user's keys. */
function rescueKeyutils(env: NodeJS.ProcessEnv): void {
  const home = vigilHome(env);
  if (env.VIGIL_HOME || rescuedFor === home) return;
  rescuedFor = home;
  const rescue = rescueKeyutilsSecrets((scope, key, value) =>
    updateVaultFile(filePaths(env), (d) => {
      d[serviceOf(scope)] ??= {};
      const entries = d[serviceOf(scope)]!;
      if (key in entries) return false;
      entries[key] = value;
      return true;
    }),
  );
  if (rescue.moved.length + rescue.kept.length > 0) lastRescue = rescue;
}

/** What this process moved out of keyutils, once, for the CLI to report. */
export function takeRescueNote(): Rescue | null {
  const note = lastRescue;
  lastRescue = null;
  return note;
}

function rawGet(backend: VaultBackendName, env: NodeJS.ProcessEnv, scope: string, key: string): string | null {
  if (backend === 'keyring') return keyringEntry(scope, key).getPassword();
  return readVaultFile(filePaths(env))[serviceOf(scope)]?.[key] ?? null;
}

function rawSet(backend: VaultBackendName, env: NodeJS.ProcessEnv, scope: string, key: string, value: string): void {
  if (backend === 'keyring') {
    keyringEntry(scope, key).setPassword(value);
    rememberScope(scope, env);
    return;
  }
  updateVaultFile(filePaths(env), (d) => {
    d[serviceOf(scope)] ??= {};
    d[serviceOf(scope)]![key] = value;
  });
}

function open(env: NodeJS.ProcessEnv): VaultBackendName {
  const backend = vaultBackend(env);
  migrate(env, backend);
  if (backend === 'file') rescueKeyutils(env);
  return backend;
}

/** The secret, or null when the key does not exist. */
export function vaultGet(key: string, options: ScopeOption = {}, env: NodeJS.ProcessEnv = process.env): string | null {
  const k = checkKey(key);
  const scope = checkScope(options.scope);
  return rawGet(open(env), env, scope, k);
}

export function vaultSet(key: string, value: string, options: ScopeOption = {}, env: NodeJS.ProcessEnv = process.env): void {
  const k = checkKey(key);
  const scope = checkScope(options.scope);
  if (typeof value !== 'string') throw invalid('value', `must be a string; got ${typeof value}`);
  if (value.length === 0) throw invalid('value', 'must not be empty');
  if (value.length > MAX_VALUE) throw invalid('value', `must be at most ${MAX_VALUE} characters; got ${value.length}`);
  rawSet(open(env), env, scope, k, value);
}

/** Removes the key; true when it existed. */
export function vaultDelete(key: string, options: ScopeOption = {}, env: NodeJS.ProcessEnv = process.env): boolean {
  const k = checkKey(key);
  const scope = checkScope(options.scope);
  const backend = open(env);
  if (backend === 'keyring') return keyringEntry(scope, k).deletePassword();
  return updateVaultFile(filePaths(env), (d) => {
    const entries = d[serviceOf(scope)];
    if (!entries || !(k in entries)) return false;
    delete entries[k];
    return true;
  });
}

/**
 * Key names only, sorted. With a scope, that scope's keys; without, every
 * key, those outside the default scope written `<scope>/<key>` (the form a
 * `vault:<scope>/<key>` reference uses).
 */
export function vaultList(options: ScopeOption = {}, env: NodeJS.ProcessEnv = process.env): string[] {
  const only = options.scope === undefined ? null : checkScope(options.scope);
  const backend = open(env);
  const byScope = new Map<string, string[]>();
  if (backend === 'keyring') {
    const { keyring } = probeKeyring();
    for (const scope of only ? [only] : knownScopes(env))
      byScope.set(
        scope,
        keyring!.findCredentials(serviceOf(scope)).map((c) => c.account).filter((a) => a !== '__vigil_probe__'),
      );
  } else {
    for (const [service, entries] of Object.entries(readVaultFile(filePaths(env)))) {
      const scope = service.slice('vigil-vault/'.length);
      if (!only || scope === only) byScope.set(scope, Object.keys(entries));
    }
  }
  const names: string[] = [];
  for (const [scope, keys] of byScope) for (const k of keys) names.push(only || scope === 'default' ? k : `${scope}/${k}`);
  return names.sort();
}

/** For code that needs one credential, e.g. the cloud client's `getSecret('api', 'api_key')`. */
export function getSecret(scope: string, key: string, env: NodeJS.ProcessEnv = process.env): string | null {
  return vaultGet(key, { scope }, env);
}

/** `<scope>/<key>` (as in `vault:<scope>/<key>` and `requires.vault_keys`) or a bare key of the default scope. */
export function parseVaultRef(ref: string): { scope: string; key: string } {
  const slash = ref.indexOf('/');
  return slash > 0 ? { scope: ref.slice(0, slash), key: ref.slice(slash + 1) } : { scope: 'default', key: ref };
}
