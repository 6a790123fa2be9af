// The calls a sentinel makes to a Vigil server (protocol.md §9, §12): durable
// subscriptions (re-keyed on restart, cursor kept), pull, ack and the lease
// operations. Refusals come back as ServerError with the protocol's code.
import { ServerError, serverClient } from '../../server-client/server-client.ts';

export { ServerError };

export interface Observation {
  id: string;
  type: string;
  subject: string | null;
  time: string;
  data?: Record<string, unknown> & { vars?: Record<string, unknown> };
  [key: string]: unknown;
}

export interface Page {
  next: number;
  head: number;
  lag: number;
  observations: Observation[];
}

export interface SubscriptionRef {
  id: string;
  token: string;
  cursor: number;
}

export function codeOf(error: unknown): string | undefined {
  return error instanceof ServerError ? error.body.code : undefined;
}

export class MonitorClient {
  private readonly http;
  constructor(readonly base: string) {
    this.http = serverClient(base);
  }

  /** Subscribes, or re-keys the stored subscription with its old token (same id, cursor kept). */
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
        if (!(error instanceof ServerError) || error.status !== 401) throw error;
      }
    }
    throw last;
  }

  pull(sub: SubscriptionRef, cursor: number, options: { wait?: number; limit?: number; subjects?: string; signal?: AbortSignal } = {}): Promise<Page> {
    const q = new URLSearchParams({ cursor: String(cursor), wait: String(options.wait ?? 0), limit: String(options.limit ?? 100) });
    if (options.subjects !== undefined) q.set('subjects', options.subjects);
    return this.http.request<Page>('GET', `/subscriptions/${encodeURIComponent(sub.id)}/pull?${q}`, {
      token: sub.token,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  ack(sub: SubscriptionRef, cursor: number): Promise<unknown> {
    return this.http.request('POST', `/subscriptions/${encodeURIComponent(sub.id)}/ack`, { token: sub.token, body: { cursor } });
  }

  lease<T = { lease: Record<string, unknown>; dead_letter?: boolean }>(
    sub: SubscriptionRef,
    action: 'claim' | 'renew' | 'complete' | 'release' | 'reject',
    body: Record<string, unknown>,
  ): Promise<T> {
    return this.http.request<T>('POST', `/subscriptions/${encodeURIComponent(sub.id)}/leases/${action}`, { token: sub.token, body });
  }
}
