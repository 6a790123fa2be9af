// A lease's record as the `record` column of the leases table holds it. The
// row's own columns already say which monitor (mkey) and subject it is, so the
// text keeps only the rest, under one-letter names, leaving out what is empty
// (a null holder, zero counts, a renew at the acquire time): about 100 bytes
// instead of 300, so that a monitor's lease rows take a third of the pages and
// a commit rewrites fewer of them (bench/README.md, issue 46). Rows written before (the whole record as JSON,
// with `mkey`) are read as they are; each is rewritten short on its next change.
// The same text goes to PostgreSQL, whose `record` column is text as well.
import type { LeaseRecord } from './records.ts';

/** The stored form: every key optional but `d`. */
interface Short {
  h?: string;
  d: number;
  a?: string;
  /** renew_time: absent when it equals acquire_time. */
  r?: string | null;
  t?: number;
  n?: number;
  x?: number;
  e?: number;
  f?: number;
  q?: number;
  c?: string;
  s?: number;
  o?: unknown;
  v?: unknown[];
}

export function leaseRecordText(l: LeaseRecord): string {
  const s: Short = { d: l.lease_duration_seconds };
  if (l.holder !== null) s.h = l.holder;
  if (l.acquire_time !== null) s.a = l.acquire_time;
  if (l.renew_time !== l.acquire_time) s.r = l.renew_time;
  if (l.lease_transitions !== 0) s.t = l.lease_transitions;
  if (l.attempts !== 0) s.n = l.attempts;
  if (l.rejects !== 0) s.x = l.rejects;
  if (l.expiresMs !== null) s.e = l.expiresMs;
  if (l.fence !== undefined) s.f = l.fence;
  if (l.queued !== undefined) s.q = l.queued;
  if (l.completedBy !== null) s.c = l.completedBy;
  if (l.completedSeq !== undefined) s.s = l.completedSeq;
  if (l.outcome !== undefined) s.o = l.outcome;
  if (l.evidence !== undefined) s.v = l.evidence;
  return JSON.stringify(s);
}

/** The record of the row (mkey, subject) of monitor `monitor`, from its `record` text in either form. */
export function leaseRecordOf(text: string, mkey: number, subject: string, monitor: string): LeaseRecord {
  const parsed = JSON.parse(text) as Short | LeaseRecord;
  if ('mkey' in parsed) return parsed;
  const s = parsed;
  const acquire = s.a ?? null;
  const renew = s.r === undefined ? acquire : s.r;
  const l: LeaseRecord = {
    monitor,
    mkey,
    subject,
    holder: s.h ?? null,
    lease_duration_seconds: s.d,
    acquire_time: acquire,
    renew_time: renew,
    lease_transitions: s.t ?? 0,
    attempts: s.n ?? 0,
    rejects: s.x ?? 0,
    expiresMs: s.e ?? null,
    completedBy: s.c ?? null,
  };
  if (s.f !== undefined) l.fence = s.f;
  if (s.q !== undefined) l.queued = s.q;
  if (s.s !== undefined) l.completedSeq = s.s;
  if ('o' in s) l.outcome = s.o;
  if (s.v !== undefined) l.evidence = s.v;
  return l;
}

/** The `queued` of a stored record text in either form (take-next's place of the subject), null when none. */
export function queuedOfText(text: string): number | null {
  const parsed = JSON.parse(text) as { q?: number; queued?: number };
  return parsed.q ?? parsed.queued ?? null;
}

/** The same in SQL, for a read that wants only the standing of a lease (queue-reads.ts). */
export const queuedSql = "coalesce(json_extract(record, '$.q'), json_extract(record, '$.queued'))";
