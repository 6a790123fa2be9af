// The PostgreSQL side of a cluster: one write transaction per batch, checked
// against each monitor's change counter, and the reads a node needs to catch
// up on a monitor. The database arbitrates: a batch whose monitor moved
// since the node read it is refused whole (ClusterConflictError).
import { type Kysely, sql, type Transaction } from 'kysely';
import { ClusterConflictError, FencedOffError } from '../cluster-conflict.ts';
import { leaseColumns, monitorColumns, observationColumns, subscriptionColumns } from '../statements.ts';
import type { MonitorTable } from '../tables.ts';
import type { CapturedBatch } from './captured-batch.ts';
import type { PgConnection } from './pg-connection.ts';
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

const insertChunk = 500;

function zip<K extends string>(columns: readonly K[], params: readonly unknown[]): Record<K, unknown> {
  return Object.fromEntries(columns.map((c, i) => [c, params[i] ?? null])) as Record<K, unknown>;
}

/** A captured monitor row without its key, which the insert and the update name themselves. */
function monitorFields(params: readonly unknown[]): Omit<MonitorTable, 'key'> {
  const { key: _key, ...fields } = zip(monitorColumns, params);
  return fields as Omit<MonitorTable, 'key'>;
}

export class PgStore {
  readonly db: Kysely<PgDatabase>;

  constructor(readonly connection: PgConnection) {
    this.db = connection.db;
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
    const revs = new Map<number, number>();
    if (batch.written.size === 0) {
      // Only confirmations: one read, no transaction.
      const now = await this.revsByKey([...batch.touched]);
      for (const mkey of batch.touched) {
        if (now.get(mkey) !== known.get(mkey)) throw new ClusterConflictError(batch.touched, 'the monitor moved since this node read it');
      }
      return revs;
    }
    try {
      await this.db.transaction().execute(async (trx) => {
        // Monitors in key order: two batches never wait on each other's rows in a cycle.
        for (const mkey of [...batch.written].sort((a, b) => a - b)) {
          const rev = await this.claimMonitor(trx, batch, mkey, known.get(mkey));
          if (rev === undefined) throw new ClusterConflictError(batch.touched);
          revs.set(mkey, rev);
        }
        // A decision that wrote nothing stands only if the monitor is still at the rev memory read.
        for (const mkey of batch.touched) {
          if (batch.written.has(mkey)) continue;
          const row = await trx.selectFrom('monitors').select('rev').where('key', '=', mkey).executeTakeFirst();
          if (row === undefined || row.rev !== known.get(mkey)) throw new ClusterConflictError(batch.touched, 'the monitor moved since this node read it');
        }
        for (let i = 0; i < batch.observations.length; i += insertChunk) {
          const rows = batch.observations.slice(i, i + insertChunk).map((p) => zip(observationColumns, p));
          await trx.insertInto('observations').values(rows as never).execute();
        }
        if (batch.subjects.length > 0) {
          const rows = batch.subjects.map(([mkey, subject]) => ({ mkey: mkey as number, subject: subject as string, rev: revs.get(mkey as number)! }));
          await trx.insertInto('subjects').values(rows).onConflict((oc) => oc.doNothing()).execute();
        }
        for (const mkey of batch.contradictions) {
          await trx.deleteFrom('contradictions').where('mkey', '=', mkey).execute();
          const rows = contradictionsOf(mkey).map((c) => ({ mkey, seq: c.seq, subject: c.subject }));
          if (rows.length > 0) await trx.insertInto('contradictions').values(rows).execute();
        }
        // One statement per chunk of rows, not per row: a batch's round trips to the database are its latency.
        // (The batch holds each subscription and lease once, as one upsert requires.)
        const subscriptions = [...batch.subscriptions.values()].map((p) => ({ ...zip(subscriptionColumns, p), rev: revs.get(p[1] as number)! }) as PgSubscriptionRow);
        for (let i = 0; i < subscriptions.length; i += insertChunk) {
          await trx
            .insertInto('subscriptions')
            .values(subscriptions.slice(i, i + insertChunk))
            .onConflict((oc) =>
              oc.column('id').doUpdateSet((eb) => ({
                state: eb.ref('excluded.state'),
                token_hash: eb.ref('excluded.token_hash'),
                cursor: eb.ref('excluded.cursor'),
                mute_deadline_ms: eb.ref('excluded.mute_deadline_ms'),
                record: eb.ref('excluded.record'),
                rev: eb.ref('excluded.rev'),
              })),
            )
            .execute();
        }
        const leases = [...batch.leases.values()].map((p) => ({ ...zip(leaseColumns, p), rev: revs.get(p[0] as number)! }) as PgLeaseRow);
        for (let i = 0; i < leases.length; i += insertChunk) {
          await trx
            .insertInto('leases')
            .values(leases.slice(i, i + insertChunk))
            .onConflict((oc) =>
              oc.columns(['mkey', 'subject']).doUpdateSet((eb) => ({
                state: eb.ref('excluded.state'),
                expires_ms: eb.ref('excluded.expires_ms'),
                record: eb.ref('excluded.record'),
                rev: eb.ref('excluded.rev'),
              })),
            )
            .execute();
        }
        for (const [mkey, upto] of batch.compactions) {
          await trx.deleteFrom('observations').where('mkey', '=', mkey as number).where('seq', '<=', upto as number).execute();
        }
        // Last, so that the owner rows are share-locked only for the batch's final moments.
        await this.checkFences(trx, batch);
        // Delivered on commit only: a rolled-back batch wakes nobody.
        // mkey:rev:1 when the batch moved a lease or a subscription (a timer owner must catch up).
        const timers = new Set([...batch.leases.values()].map((p) => p[0] as number));
        for (const p of batch.subscriptions.values()) timers.add(p[1] as number);
        const payload = [...revs].map(([mkey, rev]) => `${mkey}:${rev}:${timers.has(mkey) ? 1 : 0}`).join(',');
        if (revs.size > 0) await sql`select pg_notify(${changesChannel}, ${payload})`.execute(trx);
      });
    } catch (error) {
      if (error instanceof ClusterConflictError) throw error;
      // A unique key taken by another node (a monitor id, a seq, a subscriber) is the same race.
      const code = (error as { code?: string }).code;
      if (code === '23505') throw new ClusterConflictError(batch.touched, (error as Error).message, { cause: error });
      // A row lock held past lock_timeout (a paused node inside its transaction) or a deadlock: run again.
      if (code === '55P03' || code === '40P01') throw new ClusterConflictError(batch.touched, (error as Error).message, { cause: error });
      throw error;
    }
    return revs;
  }

  /**
   * The batch's timer and source writes stand only while the token they were made under is the
   * monitor's current, unexpired ownership (src/cluster/ownership.ts). The rows stay share-locked
   * until the batch commits: a takeover waits for it, so it never reads past a write made under the
   * old token.
   */
  private async checkFences(trx: Transaction<PgDatabase>, batch: CapturedBatch): Promise<void> {
    const fences = [...batch.fences].filter(([mkey]) => batch.written.has(mkey)).sort(([a], [b]) => a - b);
    if (fences.length === 0) return;
    const { rows } = await sql<{ mkey: number }>`
      select o.mkey from monitor_owners o
        join unnest(${fences.map(([mkey]) => mkey)}::bigint[], ${fences.map(([, token]) => token)}::bigint[]) as f(mkey, token)
          on o.mkey = f.mkey and o.token = f.token
       where o.expires_ms > (extract(epoch from clock_timestamp()) * 1000)::bigint
       order by o.mkey for share of o`.execute(trx);
    const current = new Set(rows.map((r) => r.mkey));
    const fenced = fences.map(([mkey]) => mkey).filter((mkey) => !current.has(mkey));
    if (fenced.length > 0) throw new FencedOffError(batch.touched, fenced);
  }

  /** Moves the monitor's rev (and head) under its row lock; undefined when another node got there first. */
  private async claimMonitor(trx: Transaction<PgDatabase>, batch: CapturedBatch, mkey: number, knownRev: number | undefined): Promise<number | undefined> {
    const params = batch.monitors.get(mkey);
    const seqs = batch.seqs.get(mkey);
    const fields = params ? monitorFields(params) : undefined;
    if (knownRev === undefined) {
      if (!fields || (seqs && seqs.first !== 1)) return undefined;
      const inserted = await trx
        .insertInto('monitors')
        .values({ key: mkey, ...fields, head: seqs?.last ?? 0, rev: 1 })
        .onConflict((oc) => oc.doNothing())
        .returning('rev')
        .executeTakeFirst();
      return inserted?.rev;
    }
    let update = trx
      .updateTable('monitors')
      .set((eb) => ({ ...fields, rev: eb('rev', '+', 1), ...(seqs ? { head: seqs.last } : {}) }))
      .where('key', '=', mkey)
      .where('rev', '=', knownRev);
    // The seq counter: appends continue exactly at the stored head, so no seq is skipped or taken twice.
    if (seqs) update = update.where('head', '=', seqs.first - 1);
    const updated = await update.returning('rev').executeTakeFirst();
    return updated?.rev;
  }

  async nextMonitorKey(): Promise<number> {
    const { rows } = await sql<{ key: number }>`select nextval('monitor_keys')::bigint as key`.execute(this.db);
    return Number(rows[0]!.key);
  }

  async revsByKey(keys: number[]): Promise<Map<number, number>> {
    const rows = await this.db.selectFrom('monitors').select(['key', 'rev']).where('key', 'in', keys).execute();
    return new Map(rows.map((r) => [r.key, r.rev]));
  }

  async revsById(ids: string[]): Promise<Map<string, { key: number; rev: number }>> {
    const rows = await this.db.selectFrom('monitors').select(['id', 'key', 'rev']).where('id', 'in', ids).execute();
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
