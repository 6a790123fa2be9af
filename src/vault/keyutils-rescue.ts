// Secrets earlier versions left in Linux's kernel keyutils store (where
// @napi-rs/keyring fell back silently without a Secret Service): in memory
// only, lost at reboot. They are found by their descriptions in /proc/keys
// (`keyring:<key>@vigil-vault/<scope>`), read through the keyutils store,
// written to the persistent vault and then removed from keyutils, so this
// happens once. A key this process cannot read (another login session's) is
// left alone.
import { readFileSync } from 'node:fs';
import { keyringModule } from './keyring-store.ts';

const DESCRIPTION = /\bkeyring:(.+)@vigil-vault\/([A-Za-z0-9][A-Za-z0-9._-]{0,63}): \d+$/;

/** The vigil-vault keys /proc/keys shows, as {scope, key}. */
export function keyutilsVaultKeys(procKeys = '/proc/keys'): Array<{ scope: string; key: string }> {
  let text: string;
  try {
    text = readFileSync(procKeys, 'utf8');
  } catch {
    return [];
  }
  const found = new Map<string, { scope: string; key: string }>();
  for (const line of text.split('\n')) {
    const m = DESCRIPTION.exec(line.trimEnd());
    // A key removed (invalidated, revoked or dead) stays in /proc/keys until the kernel collects it.
    const flags = line.trim().split(/\s+/)[1] ?? '';
    if (/[iRD]/.test(flags)) continue;
    if (m && / user /.test(line)) found.set(`${m[2]}/${m[1]}`, { scope: m[2]!, key: m[1]! });
  }
  return [...found.values()];
}

export interface Rescue {
  /** `<scope>/<key>` of each secret moved. */
  moved: string[];
  /** Keys already in the vault: the vault's value was kept, the keyutils copy removed. */
  kept: string[];
}

/**
 * Moves every readable vigil-vault secret out of keyutils: `store(scope, key, value)` writes it to the
 * vault unless the key is there already (returns false then).
 */
export function rescueKeyutilsSecrets(store: (scope: string, key: string, value: string) => boolean): Rescue {
  const rescue: Rescue = { moved: [], kept: [] };
  if (process.platform !== 'linux') return rescue;
  const keys = keyutilsVaultKeys();
  if (keys.length === 0) return rescue;
  const mod = keyringModule();
  if (mod instanceof Error) return rescue;
  for (const { scope, key } of keys) {
    let value: string | null;
    const entry = new mod.Entry(`vigil-vault/${scope}`, key, { linux: { store: 'keyutils' } });
    try {
      value = entry.getPassword();
    } catch {
      continue;
    }
    if (value === null) continue;
    (store(scope, key, value) ? rescue.moved : rescue.kept).push(`${scope}/${key}`);
    try {
      entry.deletePassword();
    } catch {
      // stored in the vault already; the in-memory copy goes at reboot anyway
    }
  }
  return rescue;
}
