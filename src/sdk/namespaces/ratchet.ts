// sdk.ratchet: the ratchets of src/ratchet as a script sees them.
import { type RatchetOptions, type RatchetResult, ratchetBaseline, ratchetCheck } from '../../ratchet/ratchet.ts';
import type { SdkContext } from '../../workspace/context.ts';

export function ratchetNamespace(ctx: SdkContext) {
  return {
    check: (options?: RatchetOptions): RatchetResult => ratchetCheck(ctx, options),
    baseline: (options?: RatchetOptions): void => ratchetBaseline(ctx, options),
  };
}
