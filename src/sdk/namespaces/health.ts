// sdk.health: the health check of src/health as a script sees it.
import { checkHealth, type HealthReport } from '../../health/health.ts';
import type { SdkContext } from '../../workspace/context.ts';

export function healthNamespace(ctx: SdkContext) {
  return {
    check: (): Promise<HealthReport> => checkHealth(ctx),
  };
}
