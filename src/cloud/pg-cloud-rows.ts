// The cloud API's rows in PostgreSQL (the cluster's database): every write is
// committed before its promise resolves; a delivery is claimed by moving its
// next attempt forward under the row's own condition, so one node attempts it,
// and a worker's cron run by inserting its (worker, cron, due time) once.
import { type Kysely, sql } from 'kysely';
import type { CloudRows } from './cloud-rows.ts';
import type { CloudDatabase } from './cloud-store.ts';

interface PgCloudDatabase extends CloudDatabase {
  cloud_cron_runs: { worker: string; cron: string; due_ms: number };
}

/** Deliveries polled for at once. */
const pollLimit = 1000;

export function pgCloudRows(anyDb: Kysely<never>): CloudRows {
  const db = anyDb as unknown as Kysely<PgCloudDatabase>;
  return {
    shared: true,
    settled: async () => {},
    async putKey(row) {
      await db.insertInto('cloud_api_keys').values(row).onConflict((oc) => oc.column('id').doUpdateSet({ name: row.name, revoked_at: row.revoked_at, monitors: row.monitors })).execute();
    },
    keyByHash: (hash) => db.selectFrom('cloud_api_keys').selectAll().where('hash', '=', hash).executeTakeFirst(),
    keyById: (id) => db.selectFrom('cloud_api_keys').selectAll().where('id', '=', id).executeTakeFirst(),
    keys: () => db.selectFrom('cloud_api_keys').selectAll().orderBy('created_at').execute(),
    async putWebhook(row) {
      await db.insertInto('cloud_webhooks').values(row).onConflict((oc) => oc.column('id').doUpdateSet({ active: row.active, url: row.url, secret: row.secret, filter: row.filter })).execute();
    },
    webhook: (id) => db.selectFrom('cloud_webhooks').selectAll().where('id', '=', id).executeTakeFirst(),
    webhooksOf: (keyId) => db.selectFrom('cloud_webhooks').selectAll().where('key_id', '=', keyId).orderBy('created_at').execute(),
    subscribers: (keyId, event) =>
      db.selectFrom('cloud_webhooks').selectAll().where('key_id', '=', keyId).where('event', '=', event).where('active', '=', 1).execute(),
    allSubscribers: (event) => db.selectFrom('cloud_webhooks').selectAll().where('event', '=', event).where('active', '=', 1).execute(),
    allWebhooks: () => db.selectFrom('cloud_webhooks').selectAll().orderBy('created_at').execute(),
    async deleteWebhook(id) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('cloud_webhooks').where('id', '=', id).execute();
        await trx.deleteFrom('cloud_deliveries').where('webhook_id', '=', id).execute();
      });
    },
    async putDelivery(row) {
      const { id: _id, ...fields } = row;
      await db.insertInto('cloud_deliveries').values(row).onConflict((oc) => oc.column('id').doUpdateSet(fields)).execute();
    },
    deliveriesOf: (webhookId, limit) =>
      db.selectFrom('cloud_deliveries').selectAll().where('webhook_id', '=', webhookId).orderBy('created_at', 'desc').limit(limit).execute(),
    async pruneDeliveries(beforeIso) {
      await db.deleteFrom('cloud_deliveries').where('status', '!=', 'pending').where('updated_at', '<', beforeIso).execute();
    },
    async putBody(row) {
      await db.insertInto('cloud_event_bodies').values(row).onConflict((oc) => oc.column('id').doNothing()).execute();
    },
    body: (id) => db.selectFrom('cloud_event_bodies').selectAll().where('id', '=', id).executeTakeFirst(),
    async deleteBody(id) {
      await db.deleteFrom('cloud_event_bodies').where('id', '=', id).execute();
    },
    async pruneBodies(beforeIso) {
      await sql`delete from cloud_event_bodies b where created_at < ${beforeIso}
        and not exists (select 1 from cloud_deliveries d where d.body_id = b.id and d.status = 'pending')`.execute(db);
    },
    async deleteBodyIfSent(id) {
      await sql`delete from cloud_event_bodies b where id = ${id}
        and not exists (select 1 from cloud_deliveries d where d.body_id = b.id and d.status = 'pending')`.execute(db);
    },
    async queuedBodyBytes(keyId) {
      // Per pending delivery: what will be sent, not what is stored.
      const { rows } = await sql<{ bytes: number }>`select coalesce(sum(b.bytes), 0)::bigint as bytes from cloud_deliveries d
        join cloud_event_bodies b on b.id = d.body_id where b.key_id = ${keyId} and d.status = 'pending'`.execute(db);
      return Number(rows[0]?.bytes ?? 0);
    },
    pendingDeliveries(dueBeforeMs) {
      let query = db.selectFrom('cloud_deliveries').selectAll().where('status', '=', 'pending');
      if (dueBeforeMs !== undefined) query = query.where('next_attempt_ms', '<', dueBeforeMs);
      return query.orderBy('next_attempt_ms').limit(pollLimit).execute();
    },
    async claimDelivery(id, expectedMs, untilMs) {
      let query = db.updateTable('cloud_deliveries').set({ next_attempt_ms: untilMs }).where('id', '=', id).where('status', '=', 'pending');
      query = expectedMs === null ? query.where('next_attempt_ms', 'is', null) : query.where('next_attempt_ms', '=', expectedMs);
      const result = await query.executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async putWorker(row) {
      const { name: _name, id: _id, key_id: _key, created_on: _created, ...changed } = row;
      // The name stays its key's: a concurrent deploy of it under another key through another node updates nothing.
      const result = await db
        .insertInto('cloud_workers')
        .values(row)
        .onConflict((oc) => oc.column('name').doUpdateSet(changed).where('cloud_workers.key_id', '=', row.key_id))
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows) === 1;
    },
    worker: (name) => db.selectFrom('cloud_workers').selectAll().where('name', '=', name).executeTakeFirst(),
    workerVersion: async (name) => (await db.selectFrom('cloud_workers').select('version').where('name', '=', name).executeTakeFirst())?.version,
    workersOf: (keyId) => db.selectFrom('cloud_workers').selectAll().where('key_id', '=', keyId).orderBy('name').execute(),
    allWorkers: () => db.selectFrom('cloud_workers').selectAll().orderBy('name').execute(),
    workerCrons: () => db.selectFrom('cloud_workers').select(['name', 'crons']).execute(),
    async deleteWorker(name) {
      await db.deleteFrom('cloud_workers').where('name', '=', name).execute();
    },
    async claimCronRun(name, cron, dueMs) {
      const result = await db
        .insertInto('cloud_cron_runs')
        .values({ worker: name, cron, due_ms: dueMs })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows) === 1;
    },
    async pruneCronRuns(beforeMs) {
      await db.deleteFrom('cloud_cron_runs').where('due_ms', '<', beforeMs).execute();
    },
  };
}
