// The PostgreSQL side of a cluster: one write transaction per batch, checked
// against each monitor's change counter, and the reads a node needs to catch
// up on a monitor. The database arbitrates: a batch whose monitor moved
// since the node read it is refused whole (ClusterConflictError).
import { type Kysely, sql } from 'kysely';
import { ClusterConflictError, FencedOffError } from '../cluster-conflict.ts';
import type { CapturedBatch } from './captured-batch.ts';
import type { PgConnection } from './pg-connection.ts';
import { claimFailed, commitStatement, planCommit, planSingle, rollbackStatement } from './pg-commit.ts';
import type { PgPipeline, Settled } from './pg-pipeline.ts';
import type { PgDatabase, PgLeaseRow, PgMonitorRow, PgSubscriptionRow } from './pg-tables.ts';

export const changesChannel = 'vigil_changes';

export interface MonitorDelta {
  readonly monitor: PgMonitorRow;
  readonly observations: ReadonlyArray<PgDatabase['observations']>;
  readonly subjects: ReadonlyArray<{ subject: string }>;
  readonly contradictions: ReadonlyArray<{ seq: number; subject: string | null }>;
  readonly subscriptions: readonly PgSubscriptionRow[];
  readonly leases: readonly PgLeaseRow[];
  /** Observations after those read remain (a delta read with a page size). */
  readonly more?: boolean;
}

/** A batch's failure as the lost race it is (ClusterConflictError), or as it came. */
function lostRace(batch: CapturedBatch, error: unknown, claimFailed: boolean): unknown {
  if (error instanceof ClusterConflictError) return error;
  if (claimFailed) return new ClusterConflictError(batch.touched);
  // A unique key taken by another node (a monitor id, a seq, a subscriber) is the same race.
  const code = (error as { code?: string }).code;
  if (code === '23505') return new ClusterConflictError(batch.touched, (error as Error).message, { cause: error });
  // A row lock held past lock_timeout (a paused node inside its transaction) or a deadlock: run again.
  if (code === '55P03' || code === '40P01') return new ClusterConflictError(batch.touched, (error as Error).message, { cause: error });
  return error;
}

export class PgStore {
  readonly db: Kysely<PgDatabase>;

  private readonly pipeline: PgPipeline;

  constructor(readonly connection: PgConnection) {
    this.db = connection.db;
    this.pipeline = connection.pipeline;
  }

  /**
   * Writes a batch in one transaction. `known` is the rev this node last read per monitor
   * (absent: a monitor this node creates). Returns each touched monitor's new rev.
   */
  async commit(
    batch: CapturedBatch,
    known: ReadonlyMap<number, number>,
    contradictionsOf: (mkey: number) => Array<{ seq: number; subject: string | null }>,
  ): Promise<Map<number, number>> {
    if (batch.written.size === 0) {
      // Only confirmations: one read, no transaction.
      const now = await this.revsByKey([...batch.touched]);
      for (const mkey of batch.touched) {
        if (now.get(mkey) !== known.get(mkey)) throw new ClusterConflictError(batch.touched, 'the monitor moved since this node read it');
      }
      return new Map();
    }
    // The common batch is one statement, atomic on its own: one round trip, no transaction to end.
    const single = planSingle(batch, known, changesChannel);
    if (single) {
      const [answer] = await this.pipeline.begin([single.statement]);
      if (!answer!.ok) throw lostRace(batch, answer!.error, (answer!.error as { code?: string }).code === claimFailed);
      return single.revs;
    }
    const plan = planCommit(batch, known, contradictionsOf, changesChannel);
    if (!plan) throw new ClusterConflictError(batch.touched);
    // Checks that need the answers' rows (confirmations, fences) come before COMMIT; without them,
    // COMMIT goes with the statements: one round trip, and a failed claim aborts the transaction.
    const oneTrip = !plan.confirm && !plan.fences;
    try {
      const answers = await this.pipeline.begin(oneTrip ? [...plan.statements, commitStatement] : plan.statements);
      const failedAt = answers.findIndex((a) => !a.ok);
      if (failedAt >= 0) {
        const { error } = answers[failedAt] as Extract<Settled, { ok: false }>;
        throw lostRace(batch, error, (error as { code?: string }).code === claimFailed && plan.claims.some((c) => c.at === failedAt));
      }
      if (oneTrip) return plan.revs;
      const rows = (at: number) => (answers[at] as Extract<Settled, { ok: true }>).rows;
      if (plan.confirm) {
        const now = new Map(rows(plan.confirm.at).map((r) => [Number(r.key), Number(r.rev)]));
        for (const mkey of plan.confirm.mkeys) {
          if (now.get(mkey) === undefined || now.get(mkey) !== known.get(mkey)) throw new ClusterConflictError(batch.touched, 'the monitor moved since this node read it');
        }
      }
      if (plan.fences) {
        const current = new Set(rows(plan.fences.at).map((r) => Number(r.mkey)));
        const fenced = plan.fences.mkeys.filter((mkey) => !current.has(mkey));
        if (fenced.length > 0) throw new FencedOffError(batch.touched, fenced);
      }
      await this.pipeline.end(commitStatement);
    } catch (error) {
      // The transaction is open (or aborted) on the session: it ends here; a session that cannot say so is dropped.
      await this.pipeline.rollback(rollbackStatement);
      throw lostRace(batch, error, false);
    }
    return plan.revs;
  }

  async nextMonitorKey(): Promise<number> {
    const { rows } = await sql<{ key: number }>`select nextval('monitor_keys')::bigint as key`.execute(this.db);
    return Number(rows[0]!.key);
  }

  // Requests read their monitor's rev first (a publish on current memory does not): a fixed, named statement straight on the pool.
  async revsByKey(keys: number[]): Promise<Map<number, number>> {
    const { rows } = await this.connection.pool.query<{ key: number; rev: number }>({ name: 'vigil_revs_by_key', text: 'select key, rev from monitors where key = any($1::bigint[])', values: [keys] });
    return new Map(rows.map((r) => [r.key, r.rev]));
  }

  async revsById(ids: string[]): Promise<Map<string, { key: number; rev: number }>> {
    const { rows } = await this.connection.pool.query<{ id: string; key: number; rev: number }>({ name: 'vigil_revs_by_id', text: 'select id, key, rev from monitors where id = any($1::text[])', values: [ids] });
    return new Map(rows.map((r) => [r.id, { key: r.key, rev: r.rev }]));
  }

  async allRevs(): Promise<Array<{ key: number; rev: number }>> {
    return this.db.selectFrom('monitors').select(['key', 'rev']).orderBy('key').execute();
  }

  async monitorOfSubscription(id: string): Promise<number | undefined> {
    return (await this.db.selectFrom('subscriptions').select('mkey').where('id', '=', id).executeTakeFirst())?.mkey;
  }

  /**
   * What changed on a monitor since `sinceRev`, and its observations after `afterSeq`, read in one snapshot.
   * With `page`, at most that many observations: `more` says there are others after them.
   */
  async delta(mkey: number, sinceRev: number, afterSeq: number, page?: number): Promise<MonitorDelta | undefined> {
    return this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const monitor = await trx.selectFrom('monitors').selectAll().where('key', '=', mkey).executeTakeFirst();
        if (!monitor) return undefined;
        let observationsRead = trx.selectFrom('observations').selectAll().where('mkey', '=', mkey).where('seq', '>', afterSeq).orderBy('seq');
        if (page !== undefined) observationsRead = observationsRead.limit(page + 1);
        // One after another: a connection runs one query at a time anyway, and a query queued behind one
        // that failed is what pg deprecates (the rollback then queued behind it printed a warning).
        const observations = await observationsRead.execute();
        const subjects = await trx.selectFrom('subjects').select('subject').where('mkey', '=', mkey).where('rev', '>', sinceRev).execute();
        const contradictions = await trx.selectFrom('contradictions').select(['seq', 'subject']).where('mkey', '=', mkey).execute();
        const subscriptions = await trx.selectFrom('subscriptions').selectAll().where('mkey', '=', mkey).where('rev', '>', sinceRev).execute();
        const leases = await trx.selectFrom('leases').selectAll().where('mkey', '=', mkey).where('rev', '>', sinceRev).execute();
        const more = page !== undefined && observations.length > page;
        if (more) observations.length = page;
        return { monitor, observations, subjects, contradictions, subscriptions, leases, more };
      });
  }

  /** Up to `limit` observations of a monitor after `afterSeq`, in order (a catch-up read page by page). */
  async observationsAfter(mkey: number, afterSeq: number, limit: number): Promise<Array<PgDatabase['observations']>> {
    return this.db.selectFrom('observations').selectAll().where('mkey', '=', mkey).where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute();
  }
}
