// The cloud API's rows (API keys, webhook registrations, deliveries, managed
// edge workers) in the server's own SQLite database, beside the monitors.
// Statements are compiled once by kysely and run synchronously; writes go
// through the store's group commit, so a reply sent after `settled()` and a
// delivery scheduled after it survive kill -9.
import { type CompiledQuery, DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { Prepared } from '../store/query-builder.ts';
import type { Store } from '../store/store.ts';

export interface ApiKeyTable {
  id: string;
  name: string;
  hash: string;
  created_at: string;
  revoked_at: string | null;
  /** JSON list of the monitor ids the key may trigger, or `"*"` for every monitor. */
  monitors: string;
}

export interface WebhookTable {
  id: string;
  key_id: string;
  event: string;
  url: string;
  secret: string;
  active: number;
  created_at: string;
  /** monitor.observation: JSON {monitor, types?}; null for the product events. */
  filter: string | null;
}

export interface DeliveryTable {
  id: string;
  webhook_id: string;
  event: string;
  /** The body itself in rows from before bodies were stored once; '' when `body_id` names it. */
  payload: string;
  /** The event body this delivery sends (cloud_event_bodies), shared by every delivery of one event. */
  body_id: string | null;
  status: string;
  attempts: number;
  next_attempt_ms: number | null;
  response_code: number | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

/** One event's body, stored once however many registrations it is delivered to. */
export interface EventBodyTable {
  id: string;
  key_id: string;
  body: string;
  bytes: number;
  created_at: string;
}

export interface WorkerTable {
  name: string;
  id: string;
  key_id: string;
  script: string;
  secrets: string;
  /** JSON list of cron patterns the managed edge runs the worker's scheduled handler on. */
  crons: string;
  created_on: string;
  modified_on: string;
  /** Made afresh by every write of the row: a node whose running copy holds another version starts the row's (cloud-rows.ts). */
  version: string;
}

/** The cloud API's tables, as both stores hold them (pg-cloud-rows.ts adds its cron runs). */
export interface CloudDatabase {
  cloud_api_keys: ApiKeyTable;
  cloud_webhooks: WebhookTable;
  cloud_deliveries: DeliveryTable;
  cloud_event_bodies: EventBodyTable;
  cloud_workers: WorkerTable;
}

const qb = new Kysely<CloudDatabase>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

const schema = [
  qb.schema
    .createTable('cloud_api_keys')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('monitors', 'text', (c) => c.notNull().defaultTo('[]')),
  qb.schema
    .createTable('cloud_webhooks')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('filter', 'text'),
  qb.schema
    .createTable('cloud_deliveries')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('body_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_ms', 'integer')
    .addColumn('response_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull()),
  qb.schema
    .createTable('cloud_event_bodies')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull()),
  qb.schema.createIndex('cloud_deliveries_by_webhook').ifNotExists().on('cloud_deliveries').columns(['webhook_id', 'created_at']),
  qb.schema.createIndex('cloud_deliveries_by_status').ifNotExists().on('cloud_deliveries').columns(['status', 'updated_at']),
  qb.schema.createIndex('cloud_webhooks_by_event').ifNotExists().on('cloud_webhooks').columns(['key_id', 'event']),
  qb.schema
    .createTable('cloud_workers')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('script', 'text', (c) => c.notNull())
    .addColumn('secrets', 'text', (c) => c.notNull())
    .addColumn('crons', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_on', 'text', (c) => c.notNull())
    .addColumn('modified_on', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull().defaultTo('')),
];

const nulls = <Row>(columns: readonly (keyof Row & string)[]): Row =>
  Object.fromEntries(columns.map((c) => [c, null])) as Row;

const keyColumns = ['id', 'name', 'hash', 'created_at', 'revoked_at', 'monitors'] as const;
const webhookColumns = ['id', 'key_id', 'event', 'url', 'secret', 'active', 'created_at', 'filter'] as const;
const deliveryColumns = [
  'id',
  'webhook_id',
  'event',
  'payload',
  'body_id',
  'status',
  'attempts',
  'next_attempt_ms',
  'response_code',
  'error',
  'created_at',
  'updated_at',
] as const;
const bodyColumns = ['id', 'key_id', 'body', 'bytes', 'created_at'] as const;
const workerColumns = ['name', 'id', 'key_id', 'script', 'secrets', 'crons', 'created_on', 'modified_on', 'version'] as const;

const valuesOf = <Row>(columns: readonly (keyof Row)[], row: Row) => columns.map((c) => row[c]);

export class CloudStore {
  private readonly q;

  constructor(readonly store: Store) {
    for (const statement of schema) store.driver.exec(statement.compile().sql);
    // State files from before workers had crons.
    const columns = store.driver.prepare('PRAGMA table_info(cloud_workers)').all<{ name: string }>([]);
    if (!columns.some((c) => c.name === 'crons')) store.driver.exec("ALTER TABLE cloud_workers ADD COLUMN crons TEXT NOT NULL DEFAULT '[]'");
    // And from before workers were shared by a cluster's nodes.
    if (!columns.some((c) => c.name === 'version')) store.driver.exec("ALTER TABLE cloud_workers ADD COLUMN version TEXT NOT NULL DEFAULT ''");
    // And from before webhooks could follow monitors.
    const hookColumns = store.driver.prepare('PRAGMA table_info(cloud_webhooks)').all<{ name: string }>([]);
    if (!hookColumns.some((c) => c.name === 'filter')) store.driver.exec('ALTER TABLE cloud_webhooks ADD COLUMN filter TEXT');
    // State files from before keys were scoped: such a key may trigger no monitor until made again.
    const keyTable = store.driver.prepare('PRAGMA table_info(cloud_api_keys)').all<{ name: string }>([]);
    // State files from before event bodies were stored once: their rows keep their own payload.
    const deliveryTable = store.driver.prepare('PRAGMA table_info(cloud_deliveries)').all<{ name: string }>([]);
    if (!deliveryTable.some((c) => c.name === 'body_id')) store.driver.exec('ALTER TABLE cloud_deliveries ADD COLUMN body_id TEXT');
    store.driver.exec('CREATE INDEX IF NOT EXISTS cloud_deliveries_by_body ON cloud_deliveries (body_id)');
    if (!keyTable.some((c) => c.name === 'monitors')) store.driver.exec("ALTER TABLE cloud_api_keys ADD COLUMN monitors TEXT NOT NULL DEFAULT '[]'");
    const p = (query: CompiledQuery) => new Prepared(store.driver, query);
    this.q = {
      putKey: p(qb.replaceInto('cloud_api_keys').values(nulls<ApiKeyTable>(keyColumns)).compile()),
      keyByHash: p(qb.selectFrom('cloud_api_keys').selectAll().where('hash', '=', '').compile()),
      keyById: p(qb.selectFrom('cloud_api_keys').selectAll().where('id', '=', '').compile()),
      keys: p(qb.selectFrom('cloud_api_keys').selectAll().orderBy('created_at').compile()),
      putWebhook: p(qb.replaceInto('cloud_webhooks').values(nulls<WebhookTable>(webhookColumns)).compile()),
      webhook: p(qb.selectFrom('cloud_webhooks').selectAll().where('id', '=', '').compile()),
      webhooksOf: p(qb.selectFrom('cloud_webhooks').selectAll().where('key_id', '=', '').orderBy('created_at').compile()),
      subscribers: p(
        qb.selectFrom('cloud_webhooks').selectAll().where('key_id', '=', '').where('event', '=', '').where('active', '=', 1).compile(),
      ),
      allSubscribers: p(qb.selectFrom('cloud_webhooks').selectAll().where('event', '=', '').where('active', '=', 1).compile()),
      allWebhooks: p(qb.selectFrom('cloud_webhooks').selectAll().orderBy('created_at').compile()),
      deleteWebhook: p(qb.deleteFrom('cloud_webhooks').where('id', '=', '').compile()),
      putDelivery: p(qb.replaceInto('cloud_deliveries').values(nulls<DeliveryTable>(deliveryColumns)).compile()),
      deliveriesOf: p(
        qb.selectFrom('cloud_deliveries').selectAll().where('webhook_id', '=', '').orderBy('created_at', 'desc').limit(0).compile(),
      ),
      pending: p(qb.selectFrom('cloud_deliveries').selectAll().where('status', '=', 'pending').compile()),
      prune: p(qb.deleteFrom('cloud_deliveries').where('status', '!=', 'pending').where('updated_at', '<', '').compile()),
      putBody: p(qb.insertInto('cloud_event_bodies').values(nulls<EventBodyTable>(bodyColumns)).compile()),
      body: p(qb.selectFrom('cloud_event_bodies').selectAll().where('id', '=', '').compile()),
      deleteBody: p(qb.deleteFrom('cloud_event_bodies').where('id', '=', '').compile()),
      deleteDeliveriesOf: p(qb.deleteFrom('cloud_deliveries').where('webhook_id', '=', '').compile()),
      putWorker: p(qb.replaceInto('cloud_workers').values(nulls<WorkerTable>(workerColumns)).compile()),
      worker: p(qb.selectFrom('cloud_workers').selectAll().where('name', '=', '').compile()),
      workersOf: p(qb.selectFrom('cloud_workers').selectAll().where('key_id', '=', '').orderBy('name').compile()),
      allWorkers: p(qb.selectFrom('cloud_workers').selectAll().compile()),
      deleteWorker: p(qb.deleteFrom('cloud_workers').where('name', '=', '').compile()),
    };
  }

  /** Resolves when every write queued so far is committed. */
  settled(): Promise<void> {
    return this.store.commits.settled();
  }

  putKey(row: ApiKeyTable): void {
    this.store.commits.put(`ck:${row.id}`, () => this.q.putKey.run(valuesOf(keyColumns, row)));
  }
  keyByHash(hash: string): ApiKeyTable | undefined {
    return this.q.keyByHash.get([hash]);
  }
  keyById(id: string): ApiKeyTable | undefined {
    return this.q.keyById.get([id]);
  }
  keys(): ApiKeyTable[] {
    return this.q.keys.all();
  }

  putWebhook(row: WebhookTable): void {
    this.store.commits.put(`cw:${row.id}`, () => this.q.putWebhook.run(valuesOf(webhookColumns, row)));
  }
  webhook(id: string): WebhookTable | undefined {
    return this.q.webhook.get([id]);
  }
  webhooksOf(keyId: string): WebhookTable[] {
    return this.q.webhooksOf.all([keyId]);
  }
  subscribers(keyId: string, event: string): WebhookTable[] {
    return this.q.subscribers.all([keyId, event, 1]);
  }
  /** Active registrations of `event` under every key (monitor.observation, whose filter picks the monitor). */
  allSubscribers(event: string): WebhookTable[] {
    return this.q.allSubscribers.all([event, 1]);
  }
  /** Every key's registrations, active or not (the admin's view). */
  allWebhooks(): WebhookTable[] {
    return this.q.allWebhooks.all();
  }
  deleteWebhook(id: string): void {
    this.store.commits.append(() => {
      this.q.deleteWebhook.run([id]);
      this.q.deleteDeliveriesOf.run([id]);
    });
  }

  putDelivery(row: DeliveryTable): void {
    this.store.commits.put(`cd:${row.id}`, () => this.q.putDelivery.run(valuesOf(deliveryColumns, row)));
  }
  deliveriesOf(webhookId: string, limit: number): DeliveryTable[] {
    return this.q.deliveriesOf.all([webhookId, limit]);
  }
  /** Forgets finished deliveries last touched before `beforeIso`. */
  pruneDeliveries(beforeIso: string): void {
    this.store.commits.append(() => this.q.prune.run(['pending', beforeIso]));
  }
  putBody(row: EventBodyTable): void {
    this.store.commits.put(`cb:${row.id}`, () => this.q.putBody.run(valuesOf(bodyColumns, row)));
  }
  body(id: string): EventBodyTable | undefined {
    return this.q.body.get([id]);
  }
  deleteBody(id: string): void {
    this.store.commits.append(() => this.q.deleteBody.run([id]));
  }
  /** Forgets bodies made before `beforeIso` that no pending delivery sends any more (their registrations deleted, say). */
  pruneBodies(beforeIso: string): void {
    this.store.commits.append(() =>
      this.store.driver
        .prepare(
          "DELETE FROM cloud_event_bodies WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM cloud_deliveries d WHERE d.body_id = cloud_event_bodies.id AND d.status = 'pending')",
        )
        .run([beforeIso]),
    );
  }
  deleteBodyIfSent(id: string): void {
    this.store.commits.append(() =>
      this.store.driver
        .prepare("DELETE FROM cloud_event_bodies WHERE id = ? AND NOT EXISTS (SELECT 1 FROM cloud_deliveries d WHERE d.body_id = cloud_event_bodies.id AND d.status = 'pending')")
        .run([id]),
    );
  }
  queuedBodyBytes(keyId: string): number {
    return this.store.driver
      .prepare(
        "SELECT COALESCE(SUM(b.bytes), 0) AS bytes FROM cloud_deliveries d JOIN cloud_event_bodies b ON b.id = d.body_id WHERE b.key_id = ? AND d.status = 'pending'",
      )
      .get<{ bytes: number }>([keyId])!.bytes;
  }
  pendingDeliveries(): DeliveryTable[] {
    return this.q.pending.all(['pending']);
  }

  putWorker(row: WorkerTable): void {
    this.store.commits.put(`cx:${row.name}`, () => this.q.putWorker.run(valuesOf(workerColumns, row)));
  }
  worker(name: string): WorkerTable | undefined {
    return this.q.worker.get([name]);
  }
  workersOf(keyId: string): WorkerTable[] {
    return this.q.workersOf.all([keyId]);
  }
  allWorkers(): WorkerTable[] {
    return this.q.allWorkers.all();
  }
  deleteWorker(name: string): void {
    this.store.commits.append(() => this.q.deleteWorker.run([name]));
  }
}
