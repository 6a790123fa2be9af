// sdk.worker: the worker calls of src/workers as a script sees them.
import { workerCalls } from '../../workers/worker.ts';
import type { SdkContext } from '../../workspace/context.ts';

export function workerNamespace(ctx: SdkContext) {
  return workerCalls(ctx);
}
