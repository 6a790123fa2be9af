// Webhook deliveries: every event fans out to the caller's active
// registrations as rows in the server's SQLite store, committed before the
// first attempt, so kill -9 loses no pending delivery. A non-2xx answer or a
// timeout retries at 5 s, 30 s, 2 min, 10 min and 1 h, then the delivery is
// failed. After a restart every pending row is scheduled again from its
// stored next attempt. An event's body is stored once and its deliveries
// refer to it (one 64 KB event to 200 registrations stored 200 copies); the
// bytes a key has waiting for delivery are capped, counted per delivery (what
// will be sent: one 64 KiB event to 2,000 registrations sent 131 MB while its
// body was counted once), and an event past the cap is refused (429) rather
// than queued; one event reaches at most `fanout` registrations. When several nodes share
// the rows (PostgreSQL), each polls for due deliveries and claims one before
// attempting it, so a delivery queued on a node that dies is sent by another,
// and by one node at a time; the cap is then counted in the database (the
// bodies a pending delivery still sends), whichever node queued or sent them.
import { randomUUID } from 'node:crypto';
import type { VigilEvent } from '../events/channel.ts';
import { ProtocolError } from '../protocol/errors.ts';
import type { CloudRows } from './cloud-rows.ts';
import type { DeliveryTable, WebhookTable } from './cloud-store.ts';
import type { DeliveryOutcome, DeliverySender } from './signed-delivery.ts';
import type { DeliveryView } from './wire-types.ts';

/** Bytes of event bodies one key may have waiting for delivery, by default. */
export const defaultMaxQueuedBytesPerKey = 64 * 1024 * 1024;

/** What a delivery carries: an event of the API, or an observation a follower hears of. */
type DeliveredEvent = { type: string; timestamp: string; data: Record<string, unknown> };

export const retryDelaysMs = [5_000, 30_000, 120_000, 600_000, 3_600_000] as const;
/** Shared rows: how often a node looks for due deliveries, and how long a claimed attempt keeps others off. */
const pollMs = 1_000;
const claimMs = 60_000;

/** Timer scheduling, injectable so tests need not wait an hour. */
export interface DeliveryTimers {
  now(): number;
  after(ms: number, run: () => void): () => void;
}

export const realTimers: DeliveryTimers = {
  now: () => Date.now(),
  after(ms, run) {
    const timer = setTimeout(run, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export type { DeliveryView } from './wire-types.ts';

export const deliveryView = (row: DeliveryTable): DeliveryView => ({
  id: row.id,
  event: row.event,
  status: row.status as DeliveryView['status'],
  attempts: row.attempts,
  next_attempt_at: row.next_attempt_ms === null ? null : new Date(row.next_attempt_ms).toISOString(),
  response_code: row.response_code,
  error: row.error,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export class DeliveryQueue {
  private readonly waiting = new Map<string, { row: DeliveryTable; cancel: () => void }>();
  private readonly running = new Set<Promise<void>>();
  /** Each stored body still sent by a pending delivery: its key, size and how many deliveries still send it (each counts its size). */
  private readonly bodies = new Map<string, { keyId: string; bytes: number; pending: number }>();
  private readonly queuedBytes = new Map<string, number>();
  private closed = false;
  private poller: NodeJS.Timeout | undefined;
  /** Writes staged in this turn (queued at once on SQLite), awaited before the deliveries are sent. */
  private staged: Promise<void>[] = [];
  /** Why a registration may not receive now (a follower whose monitor it may no longer see), checked at each attempt. */
  refusal: (webhook: WebhookTable) => string | undefined = () => undefined;

  constructor(
    private readonly store: CloudRows,
    private readonly sender: DeliverySender,
    private readonly timers: DeliveryTimers = realTimers,
    private readonly log: (line: string) => void = () => {},
    private readonly maxQueuedBytesPerKey = defaultMaxQueuedBytesPerKey,
    /** Registrations one event reaches at most (webhook-limits.ts). */
    private readonly fanout = 100,
  ) {}

  /** Schedules every delivery left pending by an earlier run of the server. */
  resume(): void {
    if (this.store.shared) {
      // Real time: rows come due by the database's record, whichever node wrote them.
      this.poller = setInterval(() => void this.poll(), pollMs);
      this.poller.unref();
    }
    void this.load().catch((error: Error) => this.log(`webhook deliveries: cannot read pending deliveries: ${error.message}`));
  }

  private async load(): Promise<void> {
    for (const row of await this.store.pendingDeliveries()) {
      if (row.body_id !== null && !this.store.shared) {
        const known = this.bodies.get(row.body_id);
        if (known) {
          known.pending++;
          this.queuedBytes.set(known.keyId, this.queuedBytesOf(known.keyId) + known.bytes);
        } else {
          const body = await this.store.body(row.body_id);
          if (body) this.hold(row.body_id, body.key_id, body.bytes, 1);
        }
      }
      this.schedule(row);
    }
  }

  /** Shared rows: schedules the deliveries due soon that this node does not wait on yet (another node's, say). */
  private async poll(): Promise<void> {
    try {
      for (const row of await this.store.pendingDeliveries(Date.now() + pollMs)) if (!this.waiting.has(row.id)) this.schedule(row);
    } catch (error) {
      if (!this.closed) this.log(`webhook deliveries: cannot read pending deliveries: ${(error as Error).message}`);
    }
  }

  private stage(write: Promise<void>): void {
    this.staged.push(write);
  }

  /** Waits for the writes staged so far, then for the store's commit. */
  private async stored(): Promise<void> {
    const writes = this.staged;
    this.staged = [];
    await Promise.all(writes);
    await this.store.settled();
  }

  /** Bytes of event bodies `keyId` has waiting for delivery. */
  queuedBytesOf(keyId: string): number {
    return this.queuedBytes.get(keyId) ?? 0;
  }

  private hold(bodyId: string, keyId: string, bytes: number, pending: number): void {
    this.bodies.set(bodyId, { keyId, bytes, pending });
    this.queuedBytes.set(keyId, this.queuedBytesOf(keyId) + bytes * pending);
  }

  /** One delivery of the body is finished (its bytes no longer wait); the last one lets the body go. */
  private release(bodyId: string | null): void {
    const body = bodyId === null ? undefined : this.bodies.get(bodyId);
    if (!body) return;
    const left = this.queuedBytesOf(body.keyId) - body.bytes;
    if (left > 0) this.queuedBytes.set(body.keyId, left);
    else this.queuedBytes.delete(body.keyId);
    if (--body.pending > 0) return;
    this.bodies.delete(bodyId!);
    this.store.deleteBody(bodyId!).catch((error: Error) => this.log(`webhook event body ${bodyId} not deleted: ${error.message}`));
  }

  /** Stores one delivery per active registration of `keyId` on the event, then sends them. */
  async fanOut(keyId: string, event: VigilEvent): Promise<{ deliveries: number }> {
    const registrations = await this.store.subscribers(keyId, event.type);
    const queued = await this.sharedQueuedBytes(registrations.length > 0 ? [keyId] : []);
    const rows = this.stageEvent(keyId, registrations, event, 'refuse', queued.get(keyId));
    await this.stored();
    for (const row of rows) this.schedule(row);
    return { deliveries: rows.length };
  }

  /**
   * Stores one delivery per registration, in this turn (so the rows join the
   * batch being written, e.g. the observation a follower hears of), then sends
   * them once they are committed. No caller waits to be refused here: a key
   * past its cap has the event skipped, and logged.
   */
  async deliver(registrations: readonly WebhookTable[], event: DeliveredEvent): Promise<{ deliveries: number }> {
    const byKey = new Map<string, WebhookTable[]>();
    for (const webhook of registrations) byKey.set(webhook.key_id, [...(byKey.get(webhook.key_id) ?? []), webhook]);
    const queued = await this.sharedQueuedBytes([...byKey.keys()]);
    const rows = [...byKey].flatMap(([keyId, webhooks]) => this.stageEvent(keyId, webhooks, event, 'skip', queued.get(keyId)));
    await this.stored();
    for (const row of rows) this.schedule(row);
    return { deliveries: rows.length };
  }

  /**
   * Shared rows: the bytes each key has waiting, read from the database (other nodes queue and send
   * them too). Two events queued at once through two nodes may each pass a cap that only one fits under.
   */
  private async sharedQueuedBytes(keyIds: readonly string[]): Promise<Map<string, number>> {
    if (!this.store.shared) return new Map();
    return new Map(await Promise.all(keyIds.map(async (keyId) => [keyId, await this.store.queuedBodyBytes(keyId)] as const)));
  }

  /** The event's body stored once for `keyId`, and a pending delivery per registration referring to it. */
  private stageEvent(
    keyId: string,
    registrations: readonly WebhookTable[],
    event: DeliveredEvent,
    overCap: 'refuse' | 'skip',
    sharedQueued?: number,
  ): DeliveryTable[] {
    if (registrations.length === 0) return [];
    if (registrations.length > this.fanout) {
      // Registrations made before the cap (it is enforced when registering): the oldest are reached.
      this.log(`webhook event ${event.type} of API key ${keyId} reaches ${this.fanout} of its ${registrations.length} registrations (fanout_per_event)`);
      registrations = registrations.slice(0, this.fanout);
    }
    const body = JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
    const bytes = Buffer.byteLength(body);
    // Counted per delivery: what the server will send, not what it stores.
    const sending = bytes * registrations.length;
    const queued = sharedQueued ?? this.queuedBytesOf(keyId);
    if (queued + sending > this.maxQueuedBytesPerKey) {
      const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
      this.log(`webhook events of API key ${keyId} ${overCap === 'refuse' ? 'refused' : `skipped (${event.type})`}: ${mib(queued)} of bodies already wait for delivery (cap ${mib(this.maxQueuedBytesPerKey)})`);
      if (overCap === 'skip') return [];
      throw new ProtocolError(
        'OVER_BUDGET',
        `This API key already has ${mib(queued)} of events waiting for webhook delivery; one more of ${bytes} bytes to ${registrations.length} registration${registrations.length === 1 ? '' : 's'} (${sending} bytes to send) passes the cap of ${mib(this.maxQueuedBytesPerKey)} (vigil serve --max-queued-event-bytes). Try again once deliveries finish, or delete registrations whose receivers are down.`,
        { queued_bytes: queued, limit_bytes: this.maxQueuedBytesPerKey },
      );
    }
    const now = this.timers.now();
    const at = new Date(now).toISOString();
    const bodyId = `evb_${randomUUID()}`;
    this.stage(this.store.putBody({ id: bodyId, key_id: keyId, body, bytes, created_at: at }));
    const rows = registrations.map(
      (webhook): DeliveryTable => ({
        id: `msg_${randomUUID()}`,
        webhook_id: webhook.id,
        event: event.type,
        payload: '',
        body_id: bodyId,
        status: 'pending',
        attempts: 0,
        next_attempt_ms: now,
        response_code: null,
        error: null,
        created_at: at,
        updated_at: at,
      }),
    );
    for (const row of rows) this.stage(this.store.putDelivery(row));
    if (!this.store.shared) this.hold(bodyId, keyId, bytes, rows.length);
    return rows;
  }

  /** Resolves when no attempt is in flight (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  get pendingCount(): number {
    return this.waiting.size;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.poller);
    for (const { cancel } of this.waiting.values()) cancel();
    this.waiting.clear();
  }

  private schedule(row: DeliveryTable): void {
    if (this.closed) return;
    this.waiting.get(row.id)?.cancel();
    const delay = Math.max(0, (row.next_attempt_ms ?? this.timers.now()) - this.timers.now());
    const cancel = this.timers.after(delay, () => {
      const attempt = this.attempt(row.id).catch((error: unknown) => this.log(`webhook delivery ${row.id} failed: ${(error as Error).message}`));
      this.running.add(attempt);
      void attempt.finally(() => this.running.delete(attempt));
    });
    this.waiting.set(row.id, { row, cancel });
  }

  private async attempt(id: string): Promise<void> {
    const entry = this.waiting.get(id);
    if (!entry || this.closed) return;
    let { row } = entry;
    if (this.store.shared) {
      // Another node may have attempted it meanwhile, or be attempting it now.
      const until = Date.now() + claimMs;
      if (!(await this.store.claimDelivery(row.id, row.next_attempt_ms, until))) {
        if (this.waiting.get(id) === entry) this.waiting.delete(id);
        return;
      }
      row = { ...row, next_attempt_ms: until };
    }
    const webhook = await this.store.webhook(row.webhook_id);
    const payload = row.body_id === null ? row.payload : (await this.store.body(row.body_id))?.body;
    let outcome: DeliveryOutcome;
    const refused = webhook && this.refusal(webhook);
    if (!webhook) outcome = { delivered: false, error: 'the registration was deleted' };
    else if (webhook.active !== 1) outcome = { delivered: false, error: 'the registration was disabled (its API key was revoked)' };
    else if (refused) outcome = { delivered: false, error: refused };
    else if (payload === undefined) outcome = { delivered: false, error: 'the event body is no longer stored' };
    else outcome = await this.sender.send(webhook.url, webhook.secret, row.id, payload);
    if (this.closed) return;
    const attempts = row.attempts + 1;
    const now = this.timers.now();
    const retryIn = webhook && webhook.active === 1 && !refused && payload !== undefined && !outcome.delivered ? retryDelaysMs[attempts - 1] : undefined;
    const next: DeliveryTable = {
      ...row,
      attempts,
      status: outcome.delivered ? 'delivered' : retryIn === undefined ? 'failed' : 'pending',
      next_attempt_ms: retryIn === undefined ? null : now + retryIn,
      response_code: outcome.response_code ?? null,
      error: outcome.delivered ? null : (outcome.error ?? null),
      updated_at: new Date(now).toISOString(),
    };
    this.waiting.delete(id);
    await this.store.putDelivery(next);
    if (next.status !== 'pending') {
      // Shared rows: the last delivery of a body may be finished by any node; the database tells.
      if (this.store.shared && row.body_id !== null) await this.store.deleteBodyIfSent(row.body_id);
      else this.release(row.body_id);
    }
    await this.store.settled();
    if (next.status === 'pending') this.schedule(next);
  }
}
