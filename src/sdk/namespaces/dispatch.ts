// sdk.dispatch: the tools and jobs of src/dispatch as a script sees them.
import { type DispatchToolInfo, dispatchJobStatus, dispatchTools, sendDispatchJob } from '../../dispatch/tools.ts';
import type { DispatchJob } from '../../dispatch/jobs.ts';
import type { SdkContext } from '../../workspace/context.ts';

export function dispatchNamespace(ctx: SdkContext) {
  return {
    send: (tool: string, params?: Record<string, unknown>): Promise<{ id: string; status: string }> => sendDispatchJob(ctx, tool, params),
    status: (id: string): DispatchJob => dispatchJobStatus(ctx, id),
    list: (): Promise<DispatchToolInfo[]> => dispatchTools(ctx),
  };
}
