// Read side of the vault, as the runner needs it: `api_key: vault:<key>` and
// `requires.vault_keys`. Secrets live under the service name
// `vigil-vault/<scope>` (scope "default" unless the key is written
// `<scope>/<key>`): in the desktop keyring through `secret-tool` when it is
// installed, else in ~/.vigil/vault.json ({"vigil-vault/<scope>": {key: value}},
// mode 0600), the fallback used on headless machines.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { findOnPath } from './preflight/which.ts';

export interface VaultReader {
  get(key: string): string | null;
}

function split(key: string): { service: string; name: string } {
  const slash = key.indexOf('/');
  const scope = slash > 0 ? key.slice(0, slash) : 'default';
  return { service: `vigil-vault/${scope}`, name: slash > 0 ? key.slice(slash + 1) : key };
}

export function vaultFile(): string {
  return join(homedir(), '.vigil', 'vault.json');
}

export const systemVault: VaultReader = {
  get(key: string): string | null {
    const { service, name } = split(key);
    try {
      const data = JSON.parse(readFileSync(vaultFile(), 'utf8')) as Record<string, Record<string, string>>;
      const value = data[service]?.[name];
      if (typeof value === 'string') return value;
    } catch {
      // no vault file: fall through to the keyring
    }
    if (findOnPath('secret-tool')) {
      const r = spawnSync('secret-tool', ['lookup', 'service', service, 'key', name], { encoding: 'utf8', timeout: 5000 });
      if (r.status === 0 && r.stdout !== '') return r.stdout.replace(/\n$/, '');
    }
    return null;
  },
};

/** Resolves `vault:<key>` references; other strings pass through. */
export function resolveSecret(value: string | undefined, vault: VaultReader, where: string): string | undefined {
  if (value === undefined || !value.startsWith('vault:')) return value;
  const key = value.slice('vault:'.length);
  const secret = vault.get(key);
  if (secret === null) throw new Error(`${where}: vault key "${key}" is not in the vault (service vigil-vault/…; file ${vaultFile()})`);
  return secret;
}
