// Writes rows read from PostgreSQL into a node's local SQLite replica, in one
// transaction, so that the service's synchronous reads see them.
import type { SqlDriver, SqlStatement } from '../store/sql-driver.ts';
import type { MonitorDelta } from '../store/postgres/pg-store.ts';

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

  constructor(private readonly driver: SqlDriver) {
    const p = (text: string) => driver.prepare(text);
    this.upsertMonitor = p(
      'insert or replace into monitors (key, id, status, definition, owner_token_hash, subscribe_token_hash, stats) values (?, ?, ?, ?, ?, ?, ?)',
    );
    this.insertObservation = p(
      'insert or ignore into observations (mkey, seq, type, subject, actor, tier, origin, horizon, time, source_ref, body) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.insertSubject = p('insert or ignore into subjects (mkey, subject) values (?, ?)');
    this.clearContradictions = p('delete from contradictions where mkey = ?');
    this.insertContradiction = p('insert into contradictions (mkey, seq, subject) values (?, ?, ?)');
    this.upsertSubscription = p(
      'insert or replace into subscriptions (id, mkey, subscriber, state, token_hash, cursor, mute_deadline_ms, record) values (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.upsertLease = p('insert or replace into leases (mkey, subject, state, expires_ms, record) values (?, ?, ?, ?, ?)');
    this.dropBelow = p('delete from observations where mkey = ? and seq < ?');
    this.localHead = p('select coalesce(max(seq), 0) as head from observations where mkey = ?');
    this.contradictions = p('select seq, subject from contradictions where mkey = ? order by seq');
    this.heldLeases = p("select subject, expires_ms from leases where mkey = ? and state = 'held' and expires_ms is not null");
    this.liveSubscriptions = p("select id, mute_deadline_ms from subscriptions where mkey = ? and state = 'live' and mute_deadline_ms is not null");
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
      this.upsertMonitor.run([m.key, m.id, m.status, m.definition, m.owner_token_hash, m.subscribe_token_hash, m.stats]);
      for (const o of delta.observations) {
        this.insertObservation.run([o.mkey, o.seq, o.type, o.subject, o.actor, o.tier, o.origin, o.horizon, o.time, o.source_ref, o.body]);
      }
      for (const s of delta.subjects) this.insertSubject.run([m.key, s.subject]);
      this.clearContradictions.run([m.key]);
      for (const c of delta.contradictions) this.insertContradiction.run([m.key, c.seq, c.subject]);
      for (const s of delta.subscriptions) {
        this.upsertSubscription.run([s.id, s.mkey, s.subscriber, s.state, s.token_hash, s.cursor, s.mute_deadline_ms, s.record]);
      }
      for (const l of delta.leases) this.upsertLease.run([l.mkey, l.subject, l.state, l.expires_ms, l.record]);
      if (floor > 0) this.dropBelow.run([m.key, floor]);
      this.driver.exec('COMMIT');
    } catch (error) {
      this.driver.exec('ROLLBACK');
      throw error;
    }
  }
}
