// What one API key's events may cost (issue 42): one 64 KiB event fanned out
// to 2,000 registrations sent 131 MB in 3 s while the queued-bytes cap counted
// its body once. An event reaches at most `fanout_per_event` registrations
// (a key may hold no more of one event type, or following one monitor), a key
// may register one URL `registrations_per_url` times and one host
// `registrations_per_host` times, the bytes a key has waiting are counted per
// delivery (delivery-queue.ts), and POST /v1/events is rate-limited per key.
import { ProtocolError } from '../protocol/errors.ts';

export const defaultWebhookLimits = {
  fanout_per_event: 100,
  registrations_per_url: 5,
  registrations_per_host: 20,
  events_per_minute: 300,
} as const;

export type WebhookLimits = { -readonly [K in keyof typeof defaultWebhookLimits]: number };

export const webhookLimits = (given: Partial<WebhookLimits> = {}): WebhookLimits => ({ ...defaultWebhookLimits, ...given });

/** POST /v1/events per key: a token bucket of `events_per_minute`, refilled continuously (this node's count). */
export class EventRate {
  private readonly buckets = new Map<string, { level: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number,
  ) {}

  /** Takes one event from the key's budget, or refuses with 429 naming when the next one fits. */
  take(keyId: string): void {
    const now = this.now();
    const bucket = this.buckets.get(keyId) ?? { level: this.perMinute, at: now };
    bucket.level = Math.min(this.perMinute, bucket.level + ((now - bucket.at) / 60_000) * this.perMinute);
    bucket.at = now;
    if (bucket.level < 1) {
      const wait = Math.max(1, Math.ceil(((1 - bucket.level) * 60) / this.perMinute));
      this.buckets.set(keyId, bucket);
      throw new ProtocolError('OVER_BUDGET', `This API key may send ${this.perMinute} events per minute; try again in ${wait} s.`, {
        limit: 'events_per_minute',
        limit_value: this.perMinute,
        retry_after_s: wait,
      });
    }
    bucket.level -= 1;
    // Full buckets are forgotten: the table holds only keys that sent lately.
    if (this.buckets.size > 10_000) for (const [id, b] of this.buckets) if (b.level >= this.perMinute - 1) this.buckets.delete(id);
    this.buckets.set(keyId, bucket);
  }
}
