// Writes rows read from PostgreSQL into a node's local SQLite replica, in one
// transaction, so that the service's synchronous reads see them.
import type { SqlDriver, SqlStatement } from '../store/sql-driver.ts';
import type { MonitorDelta } from '../store/postgres/pg-store.ts';
import { leaseColumns, monitorColumns, observationColumns, subscriptionColumns } from '../store/statements.ts';

export class ReplicaWriter {
  private readonly upsertMonitor: SqlStatement;
  private readonly insertObservation: SqlStatement;
  private readonly insertSubject: SqlStatement;
  private readonly clearContradictions: SqlStatement;
  private readonly insertContradiction: SqlStatement;
  private readonly upsertSubscription: SqlStatement;
  private readonly upsertLease: SqlStatement;
  private readonly dropBelow: SqlStatement;
  private readonly localHead: SqlStatement;
  private readonly contradictions: SqlStatement;
  private readonly heldLeases: SqlStatement;
  private readonly liveSubscriptions: SqlStatement;
  private readonly dropRows: SqlStatement[];
  private readonly dropObservationsPage: SqlStatement;
  private readonly pageCount: SqlStatement;
  private readonly freePages: SqlStatement;
  private readonly pageSize: number;

  constructor(private readonly driver: SqlDriver) {
    const p = (text: string) => driver.prepare(text);
    this.upsertMonitor = p(insertText('replace', 'monitors', monitorColumns));
    this.insertObservation = p(insertText('ignore', 'observations', observationColumns));
    this.insertSubject = p('insert or ignore into subjects (mkey, subject) values (?, ?)');
    this.clearContradictions = p('delete from contradictions where mkey = ?');
    this.insertContradiction = p('insert into contradictions (mkey, seq, subject) values (?, ?, ?)');
    this.upsertSubscription = p(insertText('replace', 'subscriptions', subscriptionColumns));
    this.upsertLease = p(insertText('replace', 'leases', leaseColumns));
    this.dropBelow = p('delete from observations where mkey = ? and seq < ?');
    this.localHead = p('select coalesce(max(seq), 0) as head from observations where mkey = ?');
    this.contradictions = p('select seq, subject from contradictions where mkey = ? order by seq');
    this.heldLeases = p("select subject, expires_ms from leases where mkey = ? and state = 'held' and expires_ms is not null");
    this.liveSubscriptions = p("select id, mute_deadline_ms from subscriptions where mkey = ? and state = 'live' and mute_deadline_ms is not null");
    this.dropRows = ['monitors where key', 'subjects where mkey', 'contradictions where mkey', 'subscriptions where mkey', 'leases where mkey'].map((t) => p(`delete from ${t} = ?`));
    this.dropObservationsPage = p('delete from observations where mkey = ? and seq in (select seq from observations where mkey = ? order by seq limit ?)');
    this.pageCount = p('pragma page_count');
    this.freePages = p('pragma freelist_count');
    this.pageSize = p('pragma page_size').get<{ page_size: number }>([])?.page_size ?? 4096;
  }

  /** Bytes the replica's rows take (its file's pages less the free ones). */
  usedBytes(): number {
    const pages = this.pageCount.get<{ page_count: number }>([])?.page_count ?? 0;
    const free = this.freePages.get<{ freelist_count: number }>([])?.freelist_count ?? 0;
    return (pages - free) * this.pageSize;
  }

  /** Stores a page of a monitor's observations read ahead of its row (replica-pages.ts). */
  storeObservations(rows: ReadonlyArray<MonitorDelta['observations'][number]>): void {
    this.driver.exec('BEGIN IMMEDIATE');
    try {
      for (const o of rows) this.insertObservation.run(valuesOf(observationColumns, o));
      this.driver.exec('COMMIT');
    } catch (error) {
      this.driver.exec('ROLLBACK');
      throw error;
    }
  }

  /** Gives free pages back to the file system, at most `pages` at a time (the file is in incremental auto-vacuum). */
  shrink(pages: number): number {
    const before = this.freePages.get<{ freelist_count: number }>([])?.freelist_count ?? 0;
    if (before > 0) this.driver.exec(`pragma incremental_vacuum(${Math.max(1, Math.floor(pages))})`);
    return before;
  }

  /** Deletes every row of a monitor but its observations, which go by dropObservations. */
  dropMonitor(mkey: number): void {
    this.driver.exec('BEGIN IMMEDIATE');
    try {
      for (const statement of this.dropRows) statement.run([mkey]);
      this.driver.exec('COMMIT');
    } catch (error) {
      this.driver.exec('ROLLBACK');
      throw error;
    }
  }

  /** Deletes up to `count` of a monitor's observations, oldest first; returns how many went. */
  dropObservations(mkey: number, count: number): number {
    return Number(this.dropObservationsPage.run([mkey, mkey, count]).changes);
  }

  /** Every deadline of the monitor's timers, as the replica holds them. */
  deadlines(mkey: number): { leases: Array<{ subject: string; expires_ms: number }>; subscriptions: Array<{ id: string; mute_deadline_ms: number }> } {
    return { leases: this.heldLeases.all([mkey]), subscriptions: this.liveSubscriptions.all([mkey]) };
  }

  /** The highest seq stored locally for the monitor (0 when none). */
  head(mkey: number): number {
    return this.localHead.get<{ head: number }>([mkey])?.head ?? 0;
  }

  contradictionsOf(mkey: number): Array<{ seq: number; subject: string | null }> {
    return this.contradictions.all([mkey]);
  }

  apply(delta: MonitorDelta, floor: number): void {
    const m = delta.monitor;
    this.driver.exec('BEGIN IMMEDIATE');
    try {
      this.upsertMonitor.run(valuesOf(monitorColumns, m));
      for (const o of delta.observations) this.insertObservation.run(valuesOf(observationColumns, o));
      for (const s of delta.subjects) this.insertSubject.run([m.key, s.subject]);
      this.clearContradictions.run([m.key]);
      for (const c of delta.contradictions) this.insertContradiction.run([m.key, c.seq, c.subject]);
      for (const s of delta.subscriptions) this.upsertSubscription.run(valuesOf(subscriptionColumns, s));
      for (const l of delta.leases) this.upsertLease.run(valuesOf(leaseColumns, l));
      if (floor > 0) this.dropBelow.run([m.key, floor]);
      this.driver.exec('COMMIT');
    } catch (error) {
      this.driver.exec('ROLLBACK');
      throw error;
    }
  }
}

/**
 * The replica takes PostgreSQL's rows as they are: a row already there is replaced
 * whole, or kept for observations, which never change once written.
 */
function insertText(conflict: 'ignore' | 'replace', table: string, columns: readonly string[]): string {
  return `insert or ${conflict} into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`;
}

/** A row read from PostgreSQL as the statement's parameters, in `columns` order. */
function valuesOf<Row>(columns: readonly (keyof Row)[], row: Row): unknown[] {
  const values = new Array<unknown>(columns.length);
  for (let i = 0; i < columns.length; i++) values[i] = row[columns[i]!];
  return values;
}
