// Whether a lease is still held by the grant that started some work (a
// sentinel's reaction): read from the monitor's own `lease` observations of
// the subject, from the grant's own (its seq is the fence, protocol.md §21)
// up to head. The grant stands while nothing but its holder's renewals
// follow it and its last expiry is ahead; an expiry, a completion, a release,
// a rejection or another claim ends it. Any subscription of the monitor may
// read this (a pull with a cursor of its own moves nothing): the sentinel
// hands its observe-only one to the agent, never the one that may act.
import { serverClient } from './server-client.ts';

export const LEASE_ENV = {
  base: 'VIGIL_LEASE_BASE',
  monitor: 'VIGIL_LEASE_MONITOR',
  subject: 'VIGIL_LEASE_SUBJECT',
  holder: 'VIGIL_LEASE_HOLDER',
  fence: 'VIGIL_LEASE_FENCE',
  expiresAt: 'VIGIL_LEASE_EXPIRES_AT',
  subscription: 'VIGIL_LEASE_SUBSCRIPTION',
  token: 'VIGIL_LEASE_TOKEN',
} as const;

export interface LeaseRef {
  base: string;
  monitor: string;
  subject: string;
  holder: string;
  fence: number;
  /** A subscription of the monitor to read with, and its token. */
  subscription: string;
  token: string;
}

export interface LeaseVerdict {
  held: boolean;
  reason: string;
}

interface LeasePayload {
  action?: string;
  holder?: string | null;
  fence?: number | null;
  expires?: string | null;
}

const LEASE_TYPE = 'ai.vigil.monitor.lease';

export async function checkLease(ref: LeaseRef, now = Date.now()): Promise<LeaseVerdict> {
  const http = serverClient(ref.base);
  let cursor = ref.fence;
  let granted = false;
  let expires: number | null = null;
  let ended: string | null = null;
  for (;;) {
    const q = new URLSearchParams({ cursor: String(cursor), wait: '0', limit: '1000', subjects: ref.subject });
    const page = await http.request<{ next: number; head: number; observations: Array<{ id: string; type: string; subject: string | null; data?: { payload?: LeasePayload } }> }>(
      'GET',
      `/subscriptions/${encodeURIComponent(ref.subscription)}/pull?${q}`,
      { token: ref.token },
    );
    for (const o of page.observations) {
      if (o.type !== LEASE_TYPE || o.subject !== ref.subject || ended) continue;
      const p = o.data?.payload ?? {};
      const ours = p.holder === ref.holder && p.fence === ref.fence;
      if (Number(o.id) === ref.fence) granted = p.action === 'claim' && ours;
      else if (granted && !(p.action === 'renew' && ours)) ended = `${p.action ?? 'a change'} at seq ${o.id}${p.holder && p.holder !== ref.holder ? ` by ${p.holder}` : ''}`;
      if (ours && p.expires) expires = Date.parse(p.expires);
    }
    if (page.next <= cursor || page.next > page.head) break;
    cursor = page.next;
  }
  const lease = `the lease on "${ref.subject}" of ${ref.monitor} (fence ${ref.fence}, holder ${ref.holder})`;
  if (!granted) return { held: false, reason: `${lease}: no such grant in the monitor's log` };
  if (ended) return { held: false, reason: `${lease} ended: ${ended}` };
  if (expires !== null && expires <= now) return { held: false, reason: `${lease} expired at ${new Date(expires).toISOString()}` };
  return { held: true, reason: `${lease} is held until ${expires === null ? 'its expiry' : new Date(expires).toISOString()}` };
}
