import type { CompositeContext, CompositeOutcome } from '../composite.ts';

export async function runCompound(_ctx: CompositeContext): Promise<CompositeOutcome> {
  return { status: 'failed', output: '', reason: 'not implemented' };
}
