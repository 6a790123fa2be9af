// The OS keyring, used only where it keeps secrets across reboots: the Secret
// Service on Linux (pinned: @napi-rs/keyring otherwise falls back silently to
// the kernel keyutils store, which lives in memory and is lost at reboot),
// the macOS Keychain, the Windows Credential Manager. It cannot list scopes,
// so the names of scopes that hold keys are kept (names only) in
// ~/.vigil/vault-scopes.json.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ensureVigilHome } from '../home/home.ts';

export type LinuxStore = 'secret-service' | 'keyutils';

export interface KeyringEntry {
  getPassword(): string | null;
  setPassword(v: string): void;
  deletePassword(): boolean;
}

export interface KeyringModule {
  Entry: new (service: string, user: string, options?: { linux?: { store?: LinuxStore } }) => KeyringEntry;
  findCredentials(service: string): Array<{ account: string }>;
}

const require = createRequire(import.meta.url);
let loaded: { keyring: KeyringModule | null; reason: string } | undefined;

/** Where the OS keyring persists: on Linux only the Secret Service does. */
const PERSISTENT = process.platform === 'linux' ? { linux: { store: 'secret-service' as const } } : undefined;

/** The binding, or why it cannot be loaded. */
export function keyringModule(): KeyringModule | Error {
  try {
    return require('@napi-rs/keyring') as KeyringModule;
  } catch (error) {
    return error as Error;
  }
}

/** The keyring binding when a persistent store answers a read, else null (and why). */
export function probeKeyring(): { keyring: KeyringModule | null; reason: string } {
  if (loaded) return loaded;
  const mod = keyringModule();
  if (mod instanceof Error) loaded = { keyring: null, reason: mod.message };
  else {
    try {
      new mod.Entry('vigil-vault/default', '__vigil_probe__', PERSISTENT).getPassword();
      loaded = { keyring: mod, reason: 'os keyring' };
    } catch (error) {
      const why = (error as Error).message;
      loaded = { keyring: null, reason: process.platform === 'linux' ? `no Secret Service answers (${why})` : why };
    }
  }
  return loaded;
}

/** An entry in the persistent store (never Linux's keyutils). */
export function keyringEntry(service: string, key: string): KeyringEntry {
  const { keyring, reason } = probeKeyring();
  if (!keyring) throw new Error(`the OS keyring does not answer: ${reason}`);
  return new keyring.Entry(service, key, PERSISTENT);
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
