// Checks a recipe's `requires` block. Every missing item is reported at once
// so a user fixes them in one go; nothing starts while any is missing.
import { RunRefusedError } from '../errors.ts';
import type { RecipeRequires } from '../types.ts';
import type { VaultReader } from '../../vault/vault-reader.ts';
import { findOnPath } from '../../paths/which.ts';

export function checkRequires(
  requires: RecipeRequires | undefined,
  env: NodeJS.ProcessEnv,
  vault: VaultReader,
  file: string,
): void {
  if (!requires) return;
  const missing: string[] = [];
  for (const bin of requires.bins ?? []) if (!findOnPath(bin, env.PATH)) missing.push(`requires.bins: "${bin}" is not on PATH`);
  for (const name of requires.env ?? [])
    if (env[name] === undefined || env[name] === '') missing.push(`requires.env: environment variable ${name} is not set`);
  for (const key of requires.vault_keys ?? []) if (vault.get(key) === null) missing.push(`requires.vault_keys: vault key "${key}" is missing`);
  if (missing.length > 0) throw new RunRefusedError(`${file}: requirements not met, nothing was started`, missing);
}
