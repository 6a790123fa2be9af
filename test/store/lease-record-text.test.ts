// The short text a lease row stores (src/store/lease-record-text.ts) gives
// back exactly the record written, whatever its fields hold, and a row written
// before it (the whole record as JSON) is read as it was.
import { describe, expect, it } from 'vitest';
import { leaseRecordOf, leaseRecordText, queuedOfText } from '../../src/store/lease-record-text.ts';
import type { LeaseRecord } from '../../src/store/records.ts';

/** A small deterministic generator, so that a failure names its seed. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function recordOf(next: () => number): LeaseRecord {
  const pick = <T>(...values: T[]) => values[Math.floor(next() * values.length)]!;
  const ms = () => 1_700_000_000_000 + Math.floor(next() * 1e11);
  const time = () => pick<string | null>(null, new Date(ms()).toISOString(), '2026-12-01T00:00:00Z', 'not a time');
  const acquire = time();
  const record: LeaseRecord = {
    monitor: 'work',
    mkey: 7,
    subject: pick('job-1', 'a "quoted" subject', 'ünïcode/✓'),
    holder: pick(null, 'sub:sub-0123456789ab', ''),
    lease_duration_seconds: pick(1, 30, 3600),
    acquire_time: acquire,
    renew_time: pick(acquire, time()),
    lease_transitions: pick(0, 1, 17),
    attempts: pick(0, 1, 5),
    rejects: pick(0, 2),
    expiresMs: pick(null, ms()),
    completedBy: pick(null, 'sub:sub-0123456789ab'),
  };
  if (next() < 0.5) record.fence = Math.floor(next() * 1e9);
  if (next() < 0.5) record.queued = Math.floor(next() * 1e9);
  if (next() < 0.5) record.completedSeq = Math.floor(next() * 1e9);
  if (next() < 0.5) record.outcome = pick<unknown>(null, 0, false, 'done', { ok: true, n: [1, 2] });
  if (next() < 0.5) record.evidence = pick<unknown[]>([], [{ url: 'https://example.com' }, 'x']);
  return record;
}

/** The record as JSON keeps it (no undefined fields), as the rows were compared before. */
const plain = (record: LeaseRecord) => JSON.parse(JSON.stringify(record));

describe('a lease row’s record text', () => {
  it('gives back exactly the record written, over 5,000 random records', () => {
    for (let seed = 1; seed <= 5000; seed++) {
      const record = recordOf(random(seed));
      const text = leaseRecordText(record);
      expect({ seed, record: leaseRecordOf(text, record.mkey, record.subject, record.monitor) }).toEqual({ seed, record: plain(record) });
      expect(queuedOfText(text)).toBe(record.queued ?? null);
    }
  });

  it('is a third of the whole record for a held and a completed lease', () => {
    const held: LeaseRecord = {
      monitor: 'profile-lease',
      mkey: 1,
      subject: 'job-1234',
      holder: 'sub:sub-08314e80cc94',
      lease_duration_seconds: 30,
      acquire_time: '2026-12-06T10:09:51.154Z',
      renew_time: '2026-12-06T10:09:51.154Z',
      lease_transitions: 1,
      attempts: 1,
      rejects: 0,
      expiresMs: 1796551821155,
      completedBy: null,
      fence: 4567,
      queued: 1234,
    };
    const completed: LeaseRecord = { ...held, holder: null, expiresMs: null, completedBy: held.holder, completedSeq: 4568, outcome: { ok: true } };
    for (const record of [held, completed]) {
      expect(leaseRecordText(record).length).toBeLessThan(JSON.stringify(record).length / 2.5);
    }
  });

  it('reads a row written as the whole record, as before', () => {
    const record = recordOf(random(42));
    const text = JSON.stringify(record);
    expect(leaseRecordOf(text, record.mkey, record.subject, 'ignored')).toEqual(plain(record));
    expect(queuedOfText(text)).toBe(record.queued ?? null);
  });
});
