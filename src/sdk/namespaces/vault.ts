// sdk.vault and `vigil vault`: the store plus a ledger entry per write
// (scope and key, never the value). Scripts never reach the scopes that
// hold the cloud API key (`api`) and the edge account's token (`worker`):
// Vigil reads those itself when a script calls the webhook and worker SDK.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { VigilError } from '../../errors/vigil-error.ts';
import type { SdkContext } from '../../workspace/context.ts';
import { appendLedger } from '../../ledger/ledger.ts';
import { type ScopeOption, vaultDelete, vaultGet, vaultList, vaultSet } from '../../vault/vault.ts';

const credentialScopes = new Set(['api', 'worker']);

export function vaultNamespace(ctx: SdkContext) {
  const reachable = (options: ScopeOption | null | undefined): ScopeOption => {
    const scope = options?.scope;
    if (ctx.caller === 'script' && typeof scope === 'string' && credentialScopes.has(scope)) {
      throw new VigilError(
        'SANDBOX_VIOLATION',
        `scope: the "${scope}" vault scope holds Vigil's own credentials (${scope === 'api' ? 'the cloud API key' : "the edge account's token"}); scripts can neither read nor change it. sdk.${scope === 'api' ? 'webhook' : 'worker'} uses it for you; manage it with "vigil vault ... --scope ${scope}" from a shell`,
        { field: 'scope' },
      );
    }
    return options ?? {};
  };
  // Outside a project (no .vigil/ or vigil.yml) there is no ledger to write.
  const record = (kind: string, data: Record<string, unknown>): void => {
    if (existsSync(join(ctx.projectRoot, '.vigil')) || existsSync(join(ctx.projectRoot, 'vigil.yml'))) appendLedger(ctx.projectRoot, kind, data);
  };
  return {
    get: (key: string, options: ScopeOption = {}): string | null => vaultGet(key, reachable(options), ctx.env),
    set(key: string, value: string, options: ScopeOption = {}): void {
      vaultSet(key, value, reachable(options), ctx.env);
      record('vault.write', { scope: options?.scope ?? 'default', key });
    },
    delete(key: string, options: ScopeOption = {}): boolean {
      const existed = vaultDelete(key, reachable(options), ctx.env);
      if (existed) record('vault.delete', { scope: options?.scope ?? 'default', key });
      return existed;
    },
    list(options: ScopeOption = {}): string[] {
      const names = vaultList(reachable(options), ctx.env);
      // Unscoped, the list names every scope's keys: a script is not shown the credential scopes' names either.
      return ctx.caller === 'script' ? names.filter((n) => ![...credentialScopes].some((scope) => n.startsWith(`${scope}/`))) : names;
    },
  };
}
