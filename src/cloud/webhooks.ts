// Webhook registrations of one API key: register, list, delete, test and the
// delivery log (recipes-and-sdk.md §6, the seed's WebhookRegistration and
// WebhookTestResult).
import { randomUUID } from 'node:crypto';
import { invalid, notFound, ProtocolError } from '../protocol/errors.ts';
import type { CloudRows } from './cloud-rows.ts';
import type { ApiKeyTable, WebhookTable } from './cloud-store.ts';
import { deliveryView, type DeliveryView } from './delivery-queue.ts';
import type { DeliveryOutcome, DeliverySender } from './signed-delivery.ts';
import { checkResolvedHost, checkWebhookUrl } from './url-policy.ts';
import { monitorObservationEvent, type WebhookRegistration, webhookEvents } from './wire-types.ts';
import { type FollowFilter, filterOf, servedFilterOf } from './monitor-followers.ts';
import { type WebhookLimits, webhookLimits } from './webhook-limits.ts';
import { hashToken } from '../service/tokens.ts';
import { canSee } from '../service/access.ts';
import type { MonitorService } from '../service/service.ts';

export const minSecretLength = 16;
export const maxRegistrationsPerKey = 10_000;

export type { WebhookRegistration } from './wire-types.ts';

const registrationOf = (row: WebhookTable): WebhookRegistration => ({
  id: row.id,
  event: row.event,
  url: row.url,
  active: row.active === 1 ? 'true' : 'false',
  created_at: row.created_at,
  ...servedFilterOf(row),
});

export class Webhooks {
  /** Told when a registration is added or deleted (the monitor followers re-read theirs). */
  changed: () => void = () => {};

  constructor(
    private readonly store: CloudRows,
    private readonly sender: DeliverySender,
    private readonly allowInsecure: boolean,
    private readonly service?: MonitorService,
    private readonly limits: WebhookLimits = webhookLimits(),
  ) {}

  async register(key: ApiKeyTable, input: Record<string, unknown>): Promise<{ id: string; event: string; url: string; monitor?: string; types?: string[] }> {
    const { event, secret } = input;
    const follows = event === monitorObservationEvent;
    const fields = follows ? ['event', 'url', 'secret', 'monitor', 'types', 'token'] : ['event', 'url', 'secret'];
    for (const field of Object.keys(input)) {
      if (!fields.includes(field)) {
        throw invalid(
          `Unknown field "${field}"; a registration takes event, url and secret${follows ? ', monitor, and optionally types and token' : ' (and monitor, types, token for monitor.observation)'}.`,
          { field },
        );
      }
    }
    if (typeof event !== 'string' || !webhookEvents.includes(event)) {
      throw invalid(`"event" must be one of ${webhookEvents.join(', ')}; got ${JSON.stringify(event ?? null)}.`, { field: 'event' });
    }
    const url = checkWebhookUrl(input.url, this.allowInsecure);
    if (typeof secret !== 'string' || [...secret].length < minSecretLength || secret.length > 1024) {
      throw invalid(`"secret" must be text of at least ${minSecretLength} characters (and at most 1024).`, { field: 'secret' });
    }
    const filter = follows ? this.followFilter(input) : null;
    await checkResolvedHost(url, this.allowInsecure);
    const existing = await this.store.webhooksOf(key.id);
    if (existing.length >= maxRegistrationsPerKey) {
      throw invalid(`This API key already has ${maxRegistrationsPerKey} registrations, the most one key may hold; delete some first.`, { field: 'event' });
    }
    this.checkSpread(existing, event, url, filter?.monitor);
    const { token_hash: _hash, ...shown } = filter ?? {};
    const row: WebhookTable = {
      id: `wh_${randomUUID()}`,
      key_id: key.id,
      event,
      url,
      secret,
      active: 1,
      created_at: new Date().toISOString(),
      filter: filter && JSON.stringify(filter),
    };
    await this.store.putWebhook(row);
    this.changed();
    return { id: row.id, event, url, ...(filter && shown) };
  }

  /** Refuses a registration past the key's caps: per event (its fan-out), per URL and per host. */
  private checkSpread(existing: readonly WebhookTable[], event: string, url: string, monitor: string | undefined): void {
    const { limits } = this;
    const host = new URL(url).hostname;
    const over = (count: number, limit: keyof WebhookLimits, what: string, field: string) => {
      if (count < limits[limit]) return;
      throw new ProtocolError('OVER_BUDGET', `This API key already has ${count} registrations ${what}, the most allowed (${limit} ${limits[limit]}); delete some first.`, {
        field,
        limit,
        limit_value: limits[limit],
      });
    };
    const active = existing.filter((row) => row.active === 1);
    const sameEvent = active.filter((row) => row.event === event && (monitor === undefined || filterOf(row)?.monitor === monitor));
    over(sameEvent.length, 'fanout_per_event', monitor === undefined ? `of ${event}` : `following monitor "${monitor}"`, 'event');
    over(active.filter((row) => row.url === url).length, 'registrations_per_url', `to ${url}`, 'url');
    over(active.filter((row) => new URL(row.url).hostname === host).length, 'registrations_per_host', `to the host ${host}`, 'url');
  }

  /**
   * monitor.observation: the monitor (which `token` — its owner or subscribe
   * token — must be able to see unless it is public) and the types delivered.
   * The token is checked here and not kept.
   */
  private followFilter(input: Record<string, unknown>): FollowFilter {
    const { monitor, types, token } = input;
    if (typeof monitor !== 'string' || monitor.length === 0) {
      throw invalid('"monitor" is required for monitor.observation: the id of the monitor to follow.', { field: 'monitor' });
    }
    if (token !== undefined && typeof token !== 'string') throw invalid('"token" must be the monitor\'s owner or subscribe token.', { field: 'token' });
    const feed = this.service?.feed(monitor);
    if (!feed || !canSee(feed, { bearer: token })) {
      throw notFound(`No monitor "${monitor}" is visible${token ? ' to this token' : ''}; a monitor that is not public needs its owner or subscribe token in "token".`);
    }
    // Kept as its hash: access is checked again at each delivery (the monitor may be made private, its token changed).
    const access = token === undefined ? {} : { token_hash: hashToken(token) };
    if (types === undefined) return { monitor, ...access };
    if (!Array.isArray(types) || types.length === 0 || types.length > 20 || !types.every((t) => typeof t === 'string' && t.length > 0 && t.length <= 200)) {
      throw invalid('"types" must be a list of 1 to 20 observation types (a trailing * matches a prefix, e.g. "ci.build.*").', { field: 'types' });
    }
    return { monitor, types: types as string[], ...access };
  }

  async list(key: ApiKeyTable): Promise<WebhookRegistration[]> {
    return (await this.store.webhooksOf(key.id)).map(registrationOf);
  }

  async delete(key: ApiKeyTable, id: string): Promise<{ deleted: boolean }> {
    await this.owned(key, id);
    await this.store.deleteWebhook(id);
    this.changed();
    return { deleted: true };
  }

  /** Every key's registrations (the admin's view). */
  async listAll(): Promise<Array<WebhookRegistration & { key_id: string }>> {
    return (await this.store.allWebhooks()).map((row) => ({ ...registrationOf(row), key_id: row.key_id }));
  }

  /** Deletes any key's registration (the admin). */
  async deleteAny(id: string): Promise<{ deleted: boolean }> {
    if (!(await this.store.webhook(id))) throw notFound(`No webhook registration "${id}".`);
    await this.store.deleteWebhook(id);
    this.changed();
    return { deleted: true };
  }

  /**
   * Disables every registration of a key (revoked): nothing more is delivered to them, their pending
   * deliveries fail at their next attempt, and the admin still sees (and may delete) them. Returns how many.
   */
  async disableAllOf(keyId: string): Promise<number> {
    let disabled = 0;
    for (const row of await this.store.webhooksOf(keyId)) {
      if (row.active !== 1) continue;
      await this.store.putWebhook({ ...row, active: 0 });
      disabled++;
    }
    if (disabled > 0) this.changed();
    return disabled;
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
