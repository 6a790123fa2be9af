// The typed calls a subscriber makes to a Vigil server (protocol.md §9, §12),
// used by `vigil watch` and the sentinels: durable subscriptions (re-keyed on
// restart, cursor kept), pull, ack and the lease operations. Refusals come back
// as ServerError with the protocol's code.
import { answerWithinMs, ServerError, serverClient } from './server-client.ts';

export { ServerError };

export interface Observation {
  id: string;
  type: string;
  subject: string | null;
  time: string;
  data?: Record<string, unknown> & { vars?: Record<string, unknown> };
  [key: string]: unknown;
}

/** A page of a pull: the observations, and where the subscription stands. */
export interface Page<O = Observation> {
  monitor: string;
  /** The subscription's stored cursor. */
  cursor: number;
  next: number;
  head: number;
  lag: number;
  observations: O[];
}

/** A subscription and the token that reads it. */
export interface SubscriptionKey {
  id: string;
  token: string;
}

export interface SubscriptionRef extends SubscriptionKey {
  cursor: number;
}

export interface PullOptions {
  /** Where to read from; absent: from the subscription's stored cursor. */
  cursor?: number;
  wait?: number;
  limit?: number;
  subjects?: string;
  signal?: AbortSignal;
}

export function codeOf(error: unknown): string | undefined {
  return error instanceof ServerError ? error.body.code : undefined;
}

export class ProtocolClient {
  private readonly http;
  constructor(readonly base: string) {
    this.http = serverClient(base);
  }

  /** The protocol's root URL (…/mp/v0). */
  get root(): string {
    return this.http.base;
  }

  /**
   * Subscribes, or re-keys the stored subscription with its old token (same id, cursor kept). Each bearer is
   * tried in turn while the server refuses it: a stored token a server no longer knows (restarted in memory,
   * its database restored) is answered 404 for a private monitor, as any unknown bearer is, and the next
   * bearer (the recipe's watch.token) subscribes anew.
   */
  async subscribe(
    bearers: string[],
    body: {
      monitor: string;
      subscriber: string;
      capabilities: string[];
      filter?: Record<string, unknown>;
      from: 'head' | 'earliest';
      reset_policy?: 'earliest' | 'latest' | 'none';
    },
  ): Promise<SubscriptionRef> {
    let last: unknown;
    for (const token of bearers) {
      try {
        const reply = await this.http.request<{ subscription: { id: string; cursor: number }; token: string }>('POST', '/subscriptions', { token, body });
        return { id: reply.subscription.id, token: reply.token, cursor: reply.subscription.cursor };
      } catch (error) {
        last = error;
        if (!(error instanceof ServerError) || ![401, 403, 404].includes(error.status)) throw error;
      }
    }
    throw last;
  }

  /** Pulls a page; only the options given go in the query (the server's defaults hold for the rest). */
  pull<O = Observation>(sub: SubscriptionKey, options: PullOptions = {}): Promise<Page<O>> {
    const q = new URLSearchParams();
    for (const name of ['cursor', 'wait', 'limit', 'subjects'] as const) if (options[name] !== undefined) q.set(name, String(options[name]));
    return this.http.request<Page<O>>('GET', `/subscriptions/${encodeURIComponent(sub.id)}/pull?${q}`, {
      token: sub.token,
      timeoutMs: (options.wait ?? 0) * 1000 + answerWithinMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  ack(sub: SubscriptionKey, cursor: number): Promise<unknown> {
    return this.http.request('POST', `/subscriptions/${encodeURIComponent(sub.id)}/ack`, { token: sub.token, body: { cursor } });
  }

  lease<T = { lease: Record<string, unknown>; dead_letter?: boolean }>(
    sub: SubscriptionKey,
    action: 'claim' | 'renew' | 'complete' | 'release' | 'reject',
    body: Record<string, unknown>,
  ): Promise<T> {
    return this.http.request<T>('POST', `/subscriptions/${encodeURIComponent(sub.id)}/leases/${action}`, { token: sub.token, body });
  }
}
