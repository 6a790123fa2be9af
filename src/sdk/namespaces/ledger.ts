// sdk.ledger and `vigil ledger verify|show`.
import type { SdkContext } from '../../workspace/context.ts';
import { type LedgerEntry, type LedgerVerdict, readLedger, verifyLedger } from '../../ledger/ledger.ts';

export function ledgerNamespace(ctx: SdkContext) {
  return {
    verify: (): LedgerVerdict => verifyLedger(ctx.projectRoot),
    entries: (limit = 50): LedgerEntry[] => readLedger(ctx.projectRoot, limit),
  };
}
