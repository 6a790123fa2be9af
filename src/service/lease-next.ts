// Complete, release or reject and take the next subject in the same commit,
// and several completions at once (protocol.md §21). Both run in one turn of
// the event loop, so their writes go to the store in one transaction (on a
// cluster node, one PostgreSQL transaction): a failed commit completes nothing
// and grants nothing. A list of completions is checked whole before any is
// made, so it is all or nothing too.
import { completeRefusal } from '../machines/lease-machine.ts';
import { invalid, ProtocolError } from '../protocol/errors.ts';
import { defaults } from './defaults.ts';
import { type CompleteItem, heldLease, holderOf, type LeaseBody, type NextOption, refusal } from './lease-parts.ts';
import { grantNext, lineFor, servedGrant, warmLine } from './lease-take.ts';
import type { Reply } from './reply.ts';
import type { MonitorService } from './service.ts';
import type { SubscriptionHandle } from './subscription-handle.ts';

interface NextWanted {
  readonly count: number;
  /** Unless given, the duration of the lease the call just ended. */
  readonly durationSeconds?: number;
  /** `next: {count}` answers a list; `next: true` one lease or null. */
  readonly list: boolean;
}

function wanted(next: NextOption | undefined): NextWanted | undefined {
  if (next === undefined || next === false) return undefined;
  if (next === true) return { count: 1, list: false };
  return { count: next.count ?? 1, durationSeconds: next.lease_duration_seconds, list: next.count !== undefined };
}

/**
 * Runs `act` (the complete, release or reject) and, with `next`, takes the next subjects in the same
 * turn. The line is made ready first (possibly over several turns, then `rerun` runs the whole
 * request again), so that nothing is changed until both halves can be done at once. The subjects
 * `act` just ended are not handed back by the same call.
 */
export function withNext(
  service: MonitorService,
  rerun: () => Reply | Promise<Reply>,
  handle: SubscriptionHandle,
  body: Pick<LeaseBody, 'next' | 'subject' | 'items'>,
  act: () => Record<string, unknown>,
): Reply | Promise<Reply> {
  const want = wanted(body.next);
  if (!want) return { status: 200, body: act() };
  const warming = warmLine(service, lineFor(service, handle), want.count);
  if (warming) return warming.then(rerun);
  const done = act();
  const ended = new Set(body.items ? body.items.map((i) => i.subject) : [body.subject!]);
  const last = (done.lease ?? (done.leases as unknown[] | undefined)?.[0]) as { lease_duration_seconds?: number } | undefined;
  const durationSeconds = want.durationSeconds ?? last?.lease_duration_seconds ?? defaults.leaseSeconds;
  const grants = grantNext(service, handle, { count: want.count, durationSeconds, skip: ended });
  const next = want.list ? grants.map(servedGrant) : grants[0] ? servedGrant(grants[0]) : null;
  return { status: 200, body: { ...done, next } };
}

/** The shape of `complete {items}` that the schema cannot say, checked before any state is read. */
export function checkItems(body: LeaseBody): void {
  for (const field of ['subject', 'fence', 'outcome', 'evidence', 'note'] as const) {
    if (body[field] !== undefined) throw invalid(`"${field}" does not go with "items": each item names its own subject, fence, outcome and evidence.`, { field });
  }
  const seen = new Set<string>();
  body.items!.forEach((item, i) => {
    if (seen.has(item.subject)) throw invalid(`"items.${i}.subject" repeats "${item.subject}"; each subject may be completed once per call.`, { field: `items.${i}.subject` });
    seen.add(item.subject);
  });
}

/**
 * `complete {items: [...]}`: every item is checked against its lease first (held by the caller under
 * the token it names, or already completed by it); one refusal refuses the call, naming the item,
 * and nothing is completed. Then all are completed at the same instant.
 */
export function completeItems(
  service: MonitorService,
  rerun: () => Reply | Promise<Reply>,
  handle: SubscriptionHandle,
  body: LeaseBody,
  completeOne: (item: CompleteItem, now: number) => { seq: number | null; lease: unknown },
): Reply | Promise<Reply> {
  const items = body.items!;
  const holder = holderOf(handle);
  const now = service.now();
  items.forEach((item, i) => {
    try {
      // Read as it stands (actor or row), without making an actor for it.
      const current = service.leaseRows.current(handle.feed.key, item.subject);
      if (!current) heldLease(service, handle, item.subject);
      const refused = completeRefusal(current!.state, current!.record, holder, item.fence, now);
      if (refused) throw refusal(refused, item.subject, item.fence);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      throw new ProtocolError(error.code, `Item ${i} of "items": ${error.message} Nothing was completed.`, { ...error.extra, item: i, subject: item.subject });
    }
  });
  return withNext(service, rerun, handle, body, () => {
    const results = items.map((item) => completeOne(item, now));
    return { ok: true, leases: results.map((r) => r.lease), seqs: results.map((r) => r.seq) };
  });
}
