// sdk.notify: the notices of src/notify as a script sees them.
import { sendNotice } from '../../notify/notify.ts';
import type { SdkContext } from '../../workspace/context.ts';

export function notifyNamespace(ctx: SdkContext) {
  return {
    send: (title: string, message: string): Promise<void> => sendNotice(ctx, title, message),
  };
}
