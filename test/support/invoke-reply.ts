// An operation invoked in-process (no socket), answered as a door would: the
// reply's body with its status, or the refusal's body with its status.
import { invoke, type OperationName } from '../../src/service/operations.ts';
import type { MonitorService } from '../../src/service/service.ts';

export async function replyOf(service: MonitorService, name: OperationName, input: Record<string, unknown>, bearer?: string): Promise<any> {
  try {
    const reply = await invoke(service, name, input, { caller: { bearer } });
    return { status: reply.status, ...(reply.body as object) };
  } catch (error: any) {
    if (typeof error?.toBody !== 'function') throw error;
    return { status: error.status, ...error.toBody() };
  }
}
