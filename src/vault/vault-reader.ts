// Read side of the vault, as the runner needs it: `api_key: vault:<key>` and
// `requires.vault_keys`. A reference is `<key>` (scope "default") or
// `<scope>/<key>`; the store itself is vault.ts (OS keyring or the
// encrypted ~/.vigil/vault.enc).
import { parseVaultRef, vaultGet } from './vault.ts';

export interface VaultReader {
  get(key: string): string | null;
}

export const systemVault: VaultReader = {
  get(ref: string): string | null {
    const { scope, key } = parseVaultRef(ref);
    return vaultGet(key, { scope });
  },
};

/** Resolves `vault:<key>` references; other strings pass through. */
export function resolveSecret(value: string | undefined, vault: VaultReader, where: string): string | undefined {
  if (value === undefined || !value.startsWith('vault:')) return value;
  const key = value.slice('vault:'.length);
  const secret = vault.get(key);
  if (secret === null) throw new Error(`${where}: vault key "${key}" is not in the vault (see "vigil vault list")`);
  return secret;
}
