// Webhook deliveries: every event fans out to the caller's active
// registrations as rows in the server's SQLite store, committed before the
// first attempt, so kill -9 loses no pending delivery. A non-2xx answer or a
// timeout retries at 5 s, 30 s, 2 min, 10 min and 1 h, then the delivery is
// failed. After a restart every pending row is scheduled again from its
// stored next attempt. When several nodes share the rows (PostgreSQL), each
// polls for due deliveries and claims one before attempting it, so a delivery
// queued on a node that dies is sent by another, and by one node at a time.
import { randomUUID } from 'node:crypto';
import type { VigilEvent } from '../events/channel.ts';
import type { CloudRows } from './cloud-rows.ts';
import type { DeliveryTable } from './cloud-store.ts';
import type { DeliveryOutcome, DeliverySender } from './signed-delivery.ts';

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

export interface DeliveryView {
  id: string;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  response_code: number | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

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
  private poller: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: CloudRows,
    private readonly sender: DeliverySender,
    private readonly timers: DeliveryTimers = realTimers,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Schedules every delivery left pending by an earlier run of the server. */
  resume(): void {
    if (!this.store.shared) {
      void this.poll();
      return;
    }
    // Real time: another node's rows come due by the database's record, not by injected timers.
    this.poller = setInterval(() => void this.poll(Date.now() + pollMs), pollMs);
    this.poller.unref();
    void this.poll(Date.now() + pollMs);
  }

  private async poll(dueBeforeMs?: number): Promise<void> {
    try {
      for (const row of await this.store.pendingDeliveries(dueBeforeMs)) if (!this.waiting.has(row.id)) this.schedule(row);
    } catch (error) {
      if (!this.closed) this.log(`webhook deliveries: cannot read pending deliveries: ${(error as Error).message}`);
    }
  }

  /** Stores one delivery per active registration of `keyId` on the event, then sends them. */
  async fanOut(keyId: string, event: VigilEvent): Promise<{ deliveries: number }> {
    const body = JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
    const now = this.timers.now();
    const at = new Date(now).toISOString();
    const rows = (await this.store.subscribers(keyId, event.type)).map(
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
    for (const row of rows) await this.store.putDelivery(row);
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
    this.waiting.delete(id);
    await this.store.putDelivery(next);
    await this.store.settled();
    if (next.status === 'pending') this.schedule(next);
  }
}
