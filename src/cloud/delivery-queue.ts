// Webhook deliveries: every event fans out to the caller's active
// registrations as rows in the server's SQLite store, committed before the
// first attempt, so kill -9 loses no pending delivery. A non-2xx answer or a
// timeout retries at 5 s, 30 s, 2 min, 10 min and 1 h, then the delivery is
// failed. After a restart every pending row is scheduled again from its
// stored next attempt.
import { randomUUID } from 'node:crypto';
import type { VigilEvent } from '../events/channel.ts';
import type { CloudStore, DeliveryTable, WebhookTable } from './cloud-store.ts';
import type { DeliveryOutcome, DeliverySender } from './signed-delivery.ts';
import type { DeliveryView } from './wire-types.ts';

export const retryDelaysMs = [5_000, 30_000, 120_000, 600_000, 3_600_000] as const;

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
  private closed = false;

  constructor(
    private readonly store: CloudStore,
    private readonly sender: DeliverySender,
    private readonly timers: DeliveryTimers = realTimers,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Schedules every delivery left pending by an earlier run of the server. */
  resume(): void {
    for (const row of this.store.pendingDeliveries()) this.schedule(row);
  }

  /** Stores one delivery per active registration of `keyId` on the event, then sends them. */
  fanOut(keyId: string, event: VigilEvent): Promise<{ deliveries: number }> {
    return this.deliver(this.store.subscribers(keyId, event.type), event);
  }

  /**
   * Stores one delivery per registration, in this turn (so the rows join the
   * batch being written), then sends them once they are committed.
   */
  async deliver(registrations: readonly WebhookTable[], event: { type: string; timestamp: string; data: Record<string, unknown> }): Promise<{ deliveries: number }> {
    const body = JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
    const now = this.timers.now();
    const at = new Date(now).toISOString();
    const rows = registrations.map(
      (webhook): DeliveryTable => ({
        id: `msg_${randomUUID()}`,
        webhook_id: webhook.id,
        event: event.type,
        payload: body,
        status: 'pending',
        attempts: 0,
        next_attempt_ms: now,
        response_code: null,
        error: null,
        created_at: at,
        updated_at: at,
      }),
    );
    for (const row of rows) this.store.putDelivery(row);
    await this.store.settled();
    for (const row of rows) this.schedule(row);
    return { deliveries: rows.length };
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
    const { row } = entry;
    const webhook = this.store.webhook(row.webhook_id);
    let outcome: DeliveryOutcome;
    if (webhook?.active !== 1) outcome = { delivered: false, error: 'the registration was deleted' };
    else outcome = await this.sender.send(webhook.url, webhook.secret, row.id, row.payload);
    if (this.closed) return;
    const attempts = row.attempts + 1;
    const now = this.timers.now();
    const retryIn = webhook && webhook.active === 1 && !outcome.delivered ? retryDelaysMs[attempts - 1] : undefined;
    const next: DeliveryTable = {
      ...row,
      attempts,
      status: outcome.delivered ? 'delivered' : retryIn === undefined ? 'failed' : 'pending',
      next_attempt_ms: retryIn === undefined ? null : now + retryIn,
      response_code: outcome.response_code ?? null,
      error: outcome.delivered ? null : (outcome.error ?? null),
      updated_at: new Date(now).toISOString(),
    };
    this.store.putDelivery(next);
    this.waiting.delete(id);
    await this.store.settled();
    if (next.status === 'pending') this.schedule(next);
  }
}
