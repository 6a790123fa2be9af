// The lease promise checked from the clients' own records and the monitor's
// lease history (its `lease` observations), Jepsen style: nothing here asks
// a node what it thinks; a violation names the records that show it.
import type { LeaseRecord } from './lease-clients.ts';

export interface HistoryEntry {
  readonly seq: number;
  readonly time: number;
  readonly action: string;
  readonly holder: string | null;
  readonly subject: string;
  readonly expires: number | null;
}

export interface LeaseVerdict {
  readonly grants: number;
  readonly violations: string[];
  /** Worst lateness of a recorded expiry past the lease's end, in ms. */
  readonly latestExpiryMs: number;
}

/** The `lease` observations of a monitor, as read through any subscription. */
export function leaseHistory(observations: readonly any[]): HistoryEntry[] {
  return observations
    .filter((o) => typeof o.type === 'string' && o.type.endsWith('.lease'))
    .map((o) => {
      const p = o.data.payload;
      return { seq: Number(o.id), time: Date.parse(o.time), action: p.action, holder: p.holder, subject: p.subject, expires: p.expires ? Date.parse(p.expires) : null };
    })
    .sort((a, b) => a.seq - b.seq);
}

const granted = (r: LeaseRecord) => (r.op === 'claim' || r.op === 'renew') && (r.status === 200 || r.status === 201);
const ends = (r: LeaseRecord) => r.op === 'complete' || r.op === 'release';
const show = (r: LeaseRecord) => `${r.op} by ${r.holder} on ${r.subject} via node ${r.node} sent ${r.sentAt} → ${r.status} ${JSON.stringify(r.body)}`;

export function checkLeases(records: readonly LeaseRecord[], history: readonly HistoryEntry[]): LeaseVerdict {
  const violations: string[] = [];
  const byClient = new Map<string, LeaseRecord[]>();
  for (const r of records) {
    const key = `${r.holder}\u0000${r.subject}`;
    byClient.set(key, [...(byClient.get(key) ?? []), r]);
  }
  for (const list of byClient.values()) list.sort((a, b) => a.sentAt - b.sentAt);

  // What each grant told its client: the holder has the subject from acquire_time until expires,
  // or until the client itself sent a release or complete. A request the client got no reply to
  // (it gave up, or the connection was cut) is indeterminate, Jepsen style: it may have taken
  // effect at any time after it was sent. But it acts only on the grant the client held when it
  // sent it (the fencing token refuses it on any other; a base client's request is not run once the
  // client has gone): so an unanswered release or complete ends, from its sending, the grant it was
  // sent under (the same acquire_time), even as seen through a later idempotent re-claim; never a
  // grant the client was given afterwards. A release run late on a newer grant is a violation here.
  const acquired = (r: LeaseRecord) => Date.parse(r.body.lease.acquire_time);
  const intervals: Array<{ record: LeaseRecord; from: number; to: number }> = [];
  for (const list of byClient.values()) {
    list.forEach((r, i) => {
      if (!granted(r)) return;
      const first = list.findIndex((g) => granted(g) && acquired(g) === acquired(r));
      const end = list.slice(first + 1).find((u, k) => ends(u) && (first + 1 + k > i || u.status === 0));
      const to = Math.min(Date.parse(r.body.expires), end ? end.sentAt : Number.POSITIVE_INFINITY);
      intervals.push({ record: r, from: acquired(r), to });
      if (r.body.lease.holder !== r.holder) violations.push(`a grant names another holder: ${show(r)}`);
    });
  }
  const bySubject = new Map<string, typeof intervals>();
  for (const i of intervals) bySubject.set(i.record.subject, [...(bySubject.get(i.record.subject) ?? []), i]);
  for (const list of bySubject.values()) {
    list.sort((a, b) => a.from - b.from);
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length && list[j]!.from < list[i]!.to; j++) {
        if (list[j]!.record.holder !== list[i]!.record.holder && list[j]!.to > list[j]!.from) {
          violations.push(`two holders at once:\n  ${show(list[i]!.record)}\n  ${show(list[j]!.record)}`);
        }
      }
    }
  }

  // Every grant is in the monitor's lease history.
  const entries = new Map<string, HistoryEntry[]>();
  for (const h of history) {
    const key = `${h.holder}\u0000${h.subject}`;
    entries.set(key, [...(entries.get(key) ?? []), h]);
  }
  const bySeq = new Map(history.map((h) => [h.seq, h]));
  for (const r of records) {
    if (r.status !== 200 && r.status !== 201) continue;
    const mine = entries.get(`${r.holder}\u0000${r.subject}`) ?? [];
    if (r.op === 'claim' || r.op === 'renew') {
      const expires = Date.parse(r.body.expires);
      const actions = r.op === 'renew' ? ['renew'] : r.status === 201 ? ['claim'] : ['claim', 'renew'];
      if (!mine.some((h) => actions.includes(h.action) && h.expires === expires)) {
        violations.push(`a grant the lease history does not hold (a phantom): ${show(r)}`);
      }
    } else if (typeof r.body.seq === 'number') {
      const h = bySeq.get(r.body.seq);
      if (!h || h.action !== r.op || h.holder !== r.holder) violations.push(`the history at seq ${r.body.seq} is not this ${r.op}: ${show(r)}`);
    }
  }

  // The history itself never has two holders: replayed in seq order per subject.
  let latestExpiryMs = 0;
  const state = new Map<string, { holder: string | null; expires: number | null }>();
  for (const h of history) {
    const s = state.get(h.subject) ?? { holder: null, expires: null };
    const heldByOther = s.holder !== null && s.holder !== h.holder && s.expires !== null && h.time < s.expires;
    if (h.action === 'claim' && heldByOther) violations.push(`history seq ${h.seq}: ${h.holder} claimed ${h.subject} while ${s.holder} held it until ${new Date(s.expires!).toISOString()}`);
    if (h.action === 'renew' && s.holder !== h.holder) violations.push(`history seq ${h.seq}: ${h.holder} renewed ${h.subject} held by ${s.holder}`);
    if (h.action === 'expired') {
      if (h.expires !== null && h.time < h.expires) violations.push(`history seq ${h.seq}: expiry of ${h.subject} recorded ${h.expires - h.time} ms before its end`);
      if (h.expires !== null) latestExpiryMs = Math.max(latestExpiryMs, h.time - h.expires);
    }
    if (h.action === 'claim' || h.action === 'renew') state.set(h.subject, { holder: h.holder, expires: h.expires });
    else state.set(h.subject, { holder: null, expires: null });
  }

  // A holder told LEASE_LOST before the end it was last granted (and had not ended itself).
  for (const list of byClient.values()) {
    let last: LeaseRecord | undefined;
    // After a release or complete without a reply, the holder cannot know when that hold ended (a new grant it is told of is another matter).
    let unknownEnd = false;
    for (const r of list) {
      if (granted(r) && last && acquired(r) !== acquired(last)) unknownEnd = false;
      if (granted(r)) last = r;
      else if (r.op !== 'claim' && r.status === 409 && r.body?.code === 'LEASE_LOST' && last && !unknownEnd && r.receivedAt < Date.parse(last.body.expires)) {
        violations.push(`LEASE_LOST before the lease's end (${last.body.expires}): ${show(r)}`);
      }
      if (ends(r)) last = undefined;
      if (ends(r) && r.status === 0) unknownEnd = true;
    }
  }
  return { grants: records.filter(granted).length, violations, latestExpiryMs };
}
