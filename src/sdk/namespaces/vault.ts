// sdk.vault and `vigil vault`: the store plus a ledger entry per write
// (scope and key, never the value).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SdkContext } from '../../workspace/context.ts';
import { appendLedger } from '../../ledger/ledger.ts';
import { type ScopeOption, vaultDelete, vaultGet, vaultList, vaultSet } from '../../vault/vault.ts';

export function vaultNamespace(ctx: SdkContext) {
  // Outside a project (no .vigil/ or vigil.yml) there is no ledger to write.
  const record = (kind: string, data: Record<string, unknown>): void => {
    if (existsSync(join(ctx.projectRoot, '.vigil')) || existsSync(join(ctx.projectRoot, 'vigil.yml'))) appendLedger(ctx.projectRoot, kind, data);
  };
  return {
    get: (key: string, options: ScopeOption = {}): string | null => vaultGet(key, options ?? {}, ctx.env),
    set(key: string, value: string, options: ScopeOption = {}): void {
      vaultSet(key, value, options ?? {}, ctx.env);
      record('vault.write', { scope: options?.scope ?? 'default', key });
    },
    delete(key: string, options: ScopeOption = {}): boolean {
      const existed = vaultDelete(key, options ?? {}, ctx.env);
      if (existed) record('vault.delete', { scope: options?.scope ?? 'default', key });
      return existed;
    },
    list: (options: ScopeOption = {}): string[] => vaultList(options ?? {}, ctx.env),
  };
}
