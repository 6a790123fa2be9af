// Lease clients as a user's workers would write them: each claims a subject
// through a random node, re-claims it (the idempotent path) through another,
// renews, then completes, releases or lets it lapse. Every request is kept
// with its reply and the client's own clock around it: the records the
// invariants are checked from (lease-invariants.ts). Like real clients, they
// may give up on a request after a short timeout (shorter than a node's
// pause), leaving its outcome unknown, and send it again through another
// node; half of them send the grant's fencing token, half are base clients.
import { setTimeout as sleep } from 'node:timers/promises';

export type LeaseOp = 'claim' | 'renew' | 'complete' | 'release';

export interface LeaseRecord {
  readonly holder: string;
  readonly subject: string;
  readonly op: LeaseOp;
  readonly node: number;
  readonly sentAt: number;
  readonly receivedAt: number;
  /** 0: no reply (connection refused or cut, or the client gave up); the outcome is unknown. */
  readonly status: number;
  /** The client sent the grant's fencing token. */
  readonly fenced?: boolean;
  readonly body: any;
  /** The Retry-After header of a 503. */
  readonly retryAfter?: string | null;
}

export interface LeaseClient {
  readonly id: string;
  readonly token: string;
}

export interface LeaseWorkload {
  readonly clients: readonly LeaseClient[];
  readonly subjects: readonly string[];
  /** The nodes' bases, read at each request (a restarted node may move). */
  readonly bases: () => readonly string[];
  /** Checked before each round: false ends the run. */
  readonly running: () => boolean;
  /** Every request is pushed here as its reply comes (the caller may watch it grow). */
  readonly records: LeaseRecord[];
  /** Lease durations to pick from, in seconds. */
  readonly durations?: readonly number[];
  /** A client gives up on a request after this long (default 20 s) and, for a renew, complete or release, sends it again through another node. */
  readonly timeoutMs?: number;
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

async function send(base: string, path: string, token: string, body: unknown, timeoutMs: number): Promise<{ status: number; body: any; retryAfter?: string | null }> {
  try {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : undefined;
    return response.status === 503 ? { status: 503, body: parsed, retryAfter: response.headers.get('retry-after') } : { status: response.status, body: parsed };
  } catch (error) {
    // Connection refused: nothing was sent, the request did nothing. Anything else: the outcome is unknown.
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { status: 0, body: { error: cause ?? (error as Error).message } };
  }
}

/** Runs every client while `running()`; resolves with every request each made. */
export async function runLeaseClients(workload: LeaseWorkload): Promise<LeaseRecord[]> {
  const records = workload.records;
  const durations = workload.durations ?? [1, 2];
  const timeoutMs = workload.timeoutMs ?? 20_000;
  const op = async (client: LeaseClient, subject: string, kind: LeaseOp, body: Record<string, unknown>, fenced = false) => {
    const bases = workload.bases();
    let node = Math.floor(Math.random() * bases.length);
    for (let attempt = 1; ; attempt++) {
      const sentAt = Date.now();
      const reply = await send(bases[node]!, `/subscriptions/${client.id}/leases/${kind}`, client.token, { subject, ...body }, timeoutMs);
      const record: LeaseRecord = { holder: `sub:${client.id}`, subject, op: kind, node, sentAt, receivedAt: Date.now(), ...(fenced && { fenced }), ...reply };
      records.push(record);
      // Gave up, or the node answered 503: once more through another node (a claim is simply made again later).
      const unanswered = reply.status === 503 || (reply.status === 0 && reply.body?.error !== 'ECONNREFUSED');
      if (kind === 'claim' || !unanswered || attempt >= 2) return record;
      node = (node + 1) % bases.length;
    }
  };
  await Promise.all(
    workload.clients.map(async (client, index) => {
      const sendsFence = index % 2 === 0;
      while (workload.running()) {
        const subject = pick(workload.subjects);
        const claimed = await op(client, subject, 'claim', { lease_duration_seconds: pick(durations) });
        if (claimed.status !== 201 && claimed.status !== 200) {
          await sleep(5 + Math.random() * 20);
          continue;
        }
        // The idempotent path, through whichever node: it must answer from what the database holds.
        const again = await op(client, subject, 'claim', { lease_duration_seconds: pick(durations) });
        // The token of the grant the client last heard of (the re-claim's, when it lapsed in between and was granted anew).
        const latest = again.status === 200 || again.status === 201 ? again : claimed;
        const fence = sendsFence && typeof latest.body?.fence === 'number' ? { fence: latest.body.fence as number } : {};
        if (Math.random() < 0.5) await op(client, subject, 'renew', { ...fence }, sendsFence);
        await sleep(Math.random() * 100);
        const end = Math.random();
        if (end < 0.4) await op(client, subject, 'complete', { outcome: { by: client.id }, ...fence }, sendsFence);
        else if (end < 0.8) await op(client, subject, 'release', { ...fence }, sendsFence);
        // Otherwise the lease lapses: the timer owner records the expiry.
      }
    }),
  );
  return records;
}
