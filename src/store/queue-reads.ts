// The reads take-next needs (protocol.md §21): the subjects of a monitor's
// observations in seq order from a position, the standing of one lease, and
// where a subject first matched a filter. Each is a range or point read on a
// primary key (observations by (mkey, seq), leases by (mkey, subject)),
// compiled once per filter and prepared once: nothing reads the whole log.
import { sql } from 'kysely';
import type { Filter } from '../protocol/filter.ts';
import { whereFilters } from './filter-sql.ts';
import { queuedSql } from './lease-record-text.ts';
import { Prepared, StatementCache, qb } from './query-builder.ts';
import type { LeaseState } from './records.ts';
import type { SqlDriver } from './sql-driver.ts';

export interface SubjectRow {
  readonly seq: number;
  readonly subject: string;
  /** The subject's stored lease, read in the same statement; null when it was never claimed. */
  readonly lease: LeaseStanding | null;
}

/**
 * The stored lease of the row's subject as one text, "state:expires_ms:queued" (empty when null),
 * from its primary key in the same statement: one read of the log gives each subject found its
 * standing, instead of a statement per subject.
 */
const leaseOfRow = sql<string | null>`(select l.state || ':' || ifnull(l.expires_ms, '') || ':' || ifnull(${sql.raw(queuedSql)}, '') from leases l where l.mkey = observations.mkey and l.subject = observations.subject)`;

function standingOf(text: string | null): LeaseStanding | null {
  if (text === null) return null;
  const [state, expires, queued] = text.split(':') as [string, string, string];
  return { state: state as LeaseState, expiresMs: expires === '' ? null : Number(expires), queued: queued === '' ? null : Number(queued) };
}

export interface LeaseStanding {
  readonly state: LeaseState;
  readonly expiresMs: number | null;
  /** The seq through which take-next found the subject, when it did. */
  readonly queued: number | null;
}

export class QueueReads {
  private readonly dynamic: StatementCache;
  private readonly standing: Prepared;

  constructor(driver: SqlDriver) {
    this.dynamic = new StatementCache(driver, 64);
    this.standing = new Prepared(
      driver,
      qb
        .selectFrom('leases')
        .select(['state', 'expires_ms'])
        .select(sql<number | null>`${sql.raw(queuedSql)}`.as('queued'))
        .where('mkey', '=', 0)
        .where('subject', '=', '')
        .compile(),
    );
  }

  /** Up to `limit` observations with a subject, after < seq ≤ upTo, matching every filter, in seq order. */
  subjectsAfter(mkey: number, after: number, upTo: number, filters: readonly Filter[], limit: number): SubjectRow[] {
    if (upTo <= after) return [];
    let query = qb
      .selectFrom('observations')
      .select(['seq', 'subject'])
      .select(leaseOfRow.as('lease'))
      .where('mkey', '=', mkey)
      .where('seq', '>', after)
      .where('seq', '<=', upTo)
      .where('subject', 'is not', null);
    if (filters.length > 0) query = query.where((eb) => whereFilters(eb, filters));
    const rows = this.dynamic.all<{ seq: number; subject: string; lease: string | null }>(query.orderBy('seq').limit(limit).compile());
    return rows.map((row) => ({ seq: row.seq, subject: row.subject, lease: standingOf(row.lease) }));
  }

  /** The stored lease of (mkey, subject), undefined when it was never claimed. */
  lease(mkey: number, subject: string): LeaseStanding | undefined {
    const row = this.standing.get<{ state: string; expires_ms: number | null; queued: number | null }>([mkey, subject]);
    return row ? { state: row.state as LeaseState, expiresMs: row.expires_ms, queued: row.queued } : undefined;
  }

  /**
   * The first seq in [from, to] where `subject` appears on an observation matching the filters. A range
   * read from `from`: cheap when the subject matched there (a freed subject take-next had found).
   */
  firstMatch(mkey: number, subject: string, from: number, to: number, filters: readonly Filter[]): number | undefined {
    if (to < from) return undefined;
    let query = qb.selectFrom('observations').select('seq').where('mkey', '=', mkey).where('seq', '>=', from).where('seq', '<=', to).where('subject', '=', subject);
    if (filters.length > 0) query = query.where((eb) => whereFilters(eb, filters));
    return this.dynamic.get<{ seq: number }>(query.orderBy('seq').limit(1).compile())?.seq;
  }
}
