// The OS keyring (Secret Service, macOS Keychain, Windows Credential Manager)
// through @napi-rs/keyring, used when it answers. It cannot list scopes, so
// the names of scopes that hold keys are kept (names only) in
// ~/.vigil/vault-scopes.json.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ensureVigilHome } from '../home/home.ts';

interface KeyringModule {
  Entry: new (
    service: string,
    user: string,
  ) => { getPassword(): string | null; setPassword(v: string): void; deletePassword(): boolean };
  findCredentials(service: string): Array<{ account: string }>;
}

const require = createRequire(import.meta.url);
let loaded: KeyringModule | null | undefined;

/** The keyring binding when the platform storage answers a read, else null (and why). */
export function probeKeyring(): { keyring: KeyringModule | null; reason: string } {
  if (loaded !== undefined) return { keyring: loaded, reason: loaded ? 'os keyring' : 'no keyring' };
  try {
    const mod = require('@napi-rs/keyring') as KeyringModule;
    new mod.Entry('vigil-vault/default', '__vigil_probe__').getPassword();
    loaded = mod;
    return { keyring: mod, reason: 'os keyring' };
  } catch (error) {
    loaded = null;
    return { keyring: null, reason: (error as Error).message };
  }
}

function scopesFile(env: NodeJS.ProcessEnv): string {
  return join(ensureVigilHome(env), 'vault-scopes.json');
}

export function knownScopes(env: NodeJS.ProcessEnv = process.env): string[] {
  const file = scopesFile(env);
  if (!existsSync(file)) return ['default'];
  try {
    const list = JSON.parse(readFileSync(file, 'utf8')) as string[];
    return [...new Set(['default', ...list])];
  } catch {
    return ['default'];
  }
}

export function rememberScope(scope: string, env: NodeJS.ProcessEnv = process.env): void {
  const scopes = knownScopes(env);
  if (scopes.includes(scope)) return;
  writeFileSync(scopesFile(env), JSON.stringify([...scopes, scope]), { mode: 0o600 });
}
