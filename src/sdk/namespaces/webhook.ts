// sdk.webhook and `vigil webhook …`: registrations on the cloud API
// (recipes-and-sdk.md §6). One implementation for the CLI and scripts.
import { monitorObservationEvent, webhookEvents } from '../../cloud/wire-types.ts';
import { cloudCall, cloudTarget } from '../../cloud/cloud-target.ts';
import type { SdkContext } from '../../workspace/context.ts';
import { invalid } from '../../errors/vigil-error.ts';
import type { DeliveryView, WebhookRegistration, WebhookTestResult } from '../../cloud/wire-types.ts';

export type { DeliveryView, WebhookRegistration, WebhookTestResult } from '../../cloud/wire-types.ts';

const text = (value: unknown, field: string): string => {
  if (typeof value !== 'string' || value.length === 0) throw invalid(field, `must be non-empty text; got ${JSON.stringify(value ?? null)}`);
  return value;
};

export function webhookNamespace(ctx: SdkContext) {
  const client = () => cloudTarget(ctx);
  return {
    /** `follow` is for monitor.observation: the monitor, the types delivered, and a token that sees a monitor that is not public. */
    register(
      event: string,
      url: string,
      secret: string,
      follow?: { monitor: string; types?: string[]; token?: string },
    ): Promise<{ id: string; event: string; url: string; monitor?: string; types?: string[] }> {
      if (!webhookEvents.includes(event)) throw invalid('event', `must be one of ${webhookEvents.join(', ')}; got ${JSON.stringify(event ?? null)}`);
      text(url, 'url');
      if (typeof secret !== 'string' || [...secret].length < 16) throw invalid('secret', 'must be text of at least 16 characters');
      if (event === monitorObservationEvent && !follow?.monitor) throw invalid('monitor', 'is required for monitor.observation: the id of the monitor to follow');
      if (event !== monitorObservationEvent && follow) throw invalid('monitor', `belongs to monitor.observation only, not ${event}`);
      return cloudCall(() => client().request('POST', '/webhooks', { event, url, secret, ...follow }));
    },
    list: (): Promise<WebhookRegistration[]> => cloudCall(() => client().request<WebhookRegistration[]>('GET', '/webhooks')),
    delete: (id: string): Promise<{ deleted: boolean }> =>
      cloudCall(() => client().request<{ deleted: boolean }>('DELETE', `/webhooks/${encodeURIComponent(text(id, 'id'))}`)),
    test: (id: string): Promise<WebhookTestResult> =>
      cloudCall(() => client().request<WebhookTestResult>('POST', `/webhooks/${encodeURIComponent(text(id, 'id'))}/test`)),
    deliveries: (id: string): Promise<DeliveryView[]> =>
      cloudCall(async () => (await client().request<{ deliveries: DeliveryView[] }>('GET', `/webhooks/${encodeURIComponent(text(id, 'id'))}/deliveries`)).deliveries),
  };
}
