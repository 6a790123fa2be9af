// Take-next workers as a pool's slots would run them (protocol.md §21): take
// the next subject through a random node (waiting up to a second for work),
// then complete and take the next, complete, or release; now and then a slot
// crashes and abandons its lease, which then lapses. Every request is kept
// as the lease records lease-invariants.ts checks (a complete that took the
// next subject adds the grant it answered), plus each NO_WORK answer, so
// that take-next's promises are checked from the clients' own records.
import { setTimeout as sleep } from 'node:timers/promises';
import type { HistoryEntry } from './lease-invariants.ts';
import type { LeaseClient, LeaseRecord } from './lease-clients.ts';

export interface NoWork {
  readonly node: number;
  readonly sentAt: number;
  readonly receivedAt: number;
}

export interface TakeWorkload {
  readonly clients: readonly LeaseClient[];
  readonly bases: () => readonly string[];
  readonly running: () => boolean;
  readonly records: LeaseRecord[];
  readonly noWork: NoWork[];
  /** Chance that a slot abandons the lease it just took (a crashed worker). */
  readonly crash?: number;
  /** Every lease ends in complete-and-next (otherwise also plain completes and releases). */
  readonly onlyCompleteNext?: boolean;
}

async function send(base: string, path: string, token: string, body: unknown) {
  try {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  } catch (error) {
    return { status: 0, body: { error: (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message } };
  }
}

export async function runTakeClients(workload: TakeWorkload): Promise<void> {
  const crash = workload.crash ?? 0.1;
  await Promise.all(
    workload.clients.map(async (client) => {
      const holder = `sub:${client.id}`;
      const op = async (action: string, body: Record<string, unknown>) => {
        const bases = workload.bases();
        const node = Math.floor(Math.random() * bases.length);
        const sentAt = Date.now();
        const reply = await send(bases[node]!, `/subscriptions/${client.id}/leases/${action}`, client.token, body);
        return { ...reply, node, sentAt, receivedAt: Date.now() };
      };
      /** The grant a reply carries, kept as a claim record of its subject. */
      const granted = (r: Awaited<ReturnType<typeof op>>, lease: any) => {
        workload.records.push({ holder, subject: lease.subject, op: 'claim', node: r.node, sentAt: r.sentAt, receivedAt: r.receivedAt, status: 201, body: { lease, expires: lease.expires } });
        return lease as { subject: string; fence: number; expires: string };
      };
      let current: { subject: string; fence: number } | undefined;
      while (workload.running()) {
        if (!current) {
          const r = await op('claim', { next: true, wait: 1, lease_duration_seconds: 2 });
          if (r.status === 201) current = granted(r, r.body.lease);
          else if (r.status === 404 && r.body?.code === 'NO_WORK') workload.noWork.push({ node: r.node, sentAt: r.sentAt, receivedAt: r.receivedAt });
          else {
            // No reply: whatever it granted lapses. A refusal: try again shortly.
            workload.records.push({ holder, subject: '', op: 'claim', node: r.node, sentAt: r.sentAt, receivedAt: r.receivedAt, status: r.status, body: r.body });
            await sleep(20 + Math.random() * 50);
          }
          continue;
        }
        if (Math.random() < crash) {
          // The slot dies: its lease lapses and the slot comes back empty-handed.
          current = undefined;
          await sleep(Math.random() * 200);
          continue;
        }
        await sleep(Math.random() * 30);
        const roll = workload.onlyCompleteNext ? 0 : Math.random();
        const action = roll < 0.6 ? 'complete' : roll < 0.85 ? 'complete' : 'release';
        const next = roll < 0.6 || roll >= 0.85;
        const { subject, fence } = current;
        const r = await op(action, { subject, fence, ...(next && { next: true }) });
        workload.records.push({ holder, subject, op: action as LeaseRecord['op'], node: r.node, sentAt: r.sentAt, receivedAt: r.receivedAt, status: r.status, body: r.body });
        current = r.status === 200 && r.body.next ? granted(r, r.body.next) : undefined;
      }
    }),
  );
}

/**
 * NO_WORK answers given while a subject was certainly free: published (acknowledged) before the
 * request, never claimed until after the answer, or freed (released, expired) at least `settleMs`
 * before the request (the time another node needs to hear of it) and not claimed again until after.
 */
export function idleWhileWorkWaited(noWork: readonly NoWork[], published: ReadonlyMap<string, number>, history: readonly HistoryEntry[], settleMs = 2000): string[] {
  const bySubject = new Map<string, HistoryEntry[]>();
  for (const h of history) bySubject.set(h.subject, [...(bySubject.get(h.subject) ?? []), h]);
  const violations: string[] = [];
  for (const n of noWork) {
    for (const [subject, acknowledged] of published) {
      if (acknowledged >= n.sentAt) continue;
      const events = bySubject.get(subject) ?? [];
      const before = events.filter((h) => h.time < n.sentAt - settleMs).at(-1);
      const freeBefore = before === undefined || before.action === 'release' || before.action === 'expired';
      const claimedDuring = events.some((h) => h.action === 'claim' && h.time >= (before?.time ?? 0) && h.time <= n.receivedAt && h !== before);
      if (freeBefore && !claimedDuring && (before !== undefined || !events.some((h) => h.time <= n.receivedAt))) {
        violations.push(`NO_WORK from node ${n.node} (sent ${n.sentAt}, answered ${n.receivedAt}) while ${subject} was free (${before ? `${before.action} at ${before.time}` : `published at ${acknowledged}, never claimed`})`);
      }
    }
  }
  return violations;
}
