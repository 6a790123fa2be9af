// Webhook registrations of one API key: register, list, delete, test and the
// delivery log (recipes-and-sdk.md §6, the seed's WebhookRegistration and
// WebhookTestResult).
import { randomUUID } from 'node:crypto';
import { eventTypes, isEventType } from '../events/channel.ts';
import { invalid, notFound } from '../protocol/errors.ts';
import type { CloudRows } from './cloud-rows.ts';
import type { ApiKeyTable, WebhookTable } from './cloud-store.ts';
import { deliveryView, type DeliveryView } from './delivery-queue.ts';
import type { DeliveryOutcome, DeliverySender } from './signed-delivery.ts';
import { checkResolvedHost, checkWebhookUrl } from './url-policy.ts';
import type { WebhookRegistration } from './wire-types.ts';

export const minSecretLength = 16;
export const maxRegistrationsPerKey = 10_000;

export type { WebhookRegistration } from './wire-types.ts';

const registrationOf = (row: WebhookTable): WebhookRegistration => ({
  id: row.id,
  event: row.event,
  url: row.url,
  active: row.active === 1 ? 'true' : 'false',
  created_at: row.created_at,
});

export class Webhooks {
  constructor(
    private readonly store: CloudRows,
    private readonly sender: DeliverySender,
    private readonly allowInsecure: boolean,
  ) {}

  async register(key: ApiKeyTable, input: Record<string, unknown>): Promise<{ id: string; event: string; url: string }> {
    for (const field of Object.keys(input)) {
      if (!['event', 'url', 'secret'].includes(field)) throw invalid(`Unknown field "${field}"; a registration takes event, url and secret.`, { field });
    }
    const { event, secret } = input;
    if (!isEventType(event)) {
      throw invalid(`"event" must be one of ${eventTypes.join(', ')}; got ${JSON.stringify(event ?? null)}.`, { field: 'event' });
    }
    const url = checkWebhookUrl(input.url, this.allowInsecure);
    if (typeof secret !== 'string' || [...secret].length < minSecretLength || secret.length > 1024) {
      throw invalid(`"secret" must be text of at least ${minSecretLength} characters (and at most 1024).`, { field: 'secret' });
    }
    await checkResolvedHost(url, this.allowInsecure);
    if ((await this.store.webhooksOf(key.id)).length >= maxRegistrationsPerKey) {
      throw invalid(`This API key already has ${maxRegistrationsPerKey} registrations, the most one key may hold; delete some first.`, { field: 'event' });
    }
    const row: WebhookTable = {
      id: `wh_${randomUUID()}`,
      key_id: key.id,
      event,
      url,
      secret,
      active: 1,
      created_at: new Date().toISOString(),
    };
    await this.store.putWebhook(row);
    return { id: row.id, event, url };
  }

  async list(key: ApiKeyTable): Promise<WebhookRegistration[]> {
    return (await this.store.webhooksOf(key.id)).map(registrationOf);
  }

  async delete(key: ApiKeyTable, id: string): Promise<{ deleted: boolean }> {
    await this.owned(key, id);
    await this.store.deleteWebhook(id);
    return { deleted: true };
  }

  /** One signed delivery of a `webhook.test` event, sent now and not retried. */
  async test(key: ApiKeyTable, id: string): Promise<DeliveryOutcome> {
    const row = await this.owned(key, id);
    const body = JSON.stringify({
      type: 'webhook.test',
      timestamp: new Date().toISOString(),
      data: { webhook_id: row.id, event: row.event, message: 'A test delivery from Vigil.' },
    });
    return this.sender.send(row.url, row.secret, `msg_${randomUUID()}`, body);
  }

  async deliveries(key: ApiKeyTable, id: string, limitText: unknown): Promise<DeliveryView[]> {
    await this.owned(key, id);
    const limit = limitText === undefined ? 100 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalid('"limit" must be a whole number from 1 to 1000.', { field: 'limit' });
    return (await this.store.deliveriesOf(id, limit)).map(deliveryView);
  }

  /** Another key's registration is "not found": its existence is not disclosed. */
  private async owned(key: ApiKeyTable, id: string): Promise<WebhookTable> {
    const row = await this.store.webhook(id);
    if (!row || row.key_id !== key.id) throw notFound(`No webhook registration "${id}" for this API key.`);
    return row;
  }
}
