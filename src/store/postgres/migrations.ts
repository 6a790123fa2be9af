// The PostgreSQL schema as kysely migrations, applied on start. Each node of
// a cluster runs them; PostgreSQL's transactional DDL and the Migrator's own
// lock make concurrent starts safe.
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';

const initial: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('monitors')
      .addColumn('key', 'bigint', (c) => c.primaryKey())
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('owner_token_hash', 'text', (c) => c.notNull())
      .addColumn('subscribe_token_hash', 'text')
      .addColumn('stats', 'text', (c) => c.notNull())
      // The seq counter and the change counter: every write transaction of a monitor moves `rev`
      // under this row's lock, and `head` is the highest seq stored.
      .addColumn('head', 'bigint', (c) => c.notNull())
      .addColumn('rev', 'bigint', (c) => c.notNull())
      .execute();
    await sql`create sequence monitor_keys`.execute(db);
    await db.schema
      .createTable('observations')
      .addColumn('mkey', 'bigint', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('subject', 'text')
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('tier', 'text', (c) => c.notNull())
      .addColumn('origin', 'text', (c) => c.notNull())
      .addColumn('horizon', 'text', (c) => c.notNull())
      .addColumn('time', 'text', (c) => c.notNull())
      .addColumn('source_ref', 'text')
      .addColumn('body', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('observations_pk', ['mkey', 'seq'])
      .execute();
    await db.schema
      .createTable('subjects')
      .addColumn('mkey', 'bigint', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('rev', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('subjects_pk', ['mkey', 'subject'])
      .execute();
    await db.schema
      .createTable('contradictions')
      .addColumn('mkey', 'bigint', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('subject', 'text')
      .addPrimaryKeyConstraint('contradictions_pk', ['mkey', 'seq'])
      .execute();
    await db.schema
      .createTable('subscriptions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('mkey', 'bigint', (c) => c.notNull())
      .addColumn('subscriber', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull())
      .addColumn('cursor', 'bigint', (c) => c.notNull())
      .addColumn('mute_deadline_ms', 'bigint')
      .addColumn('record', 'text', (c) => c.notNull())
      .addColumn('rev', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('subscriptions_subscriber', ['mkey', 'subscriber'])
      .execute();
    await db.schema.createIndex('subscriptions_rev').on('subscriptions').columns(['mkey', 'rev']).execute();
    await db.schema
      .createTable('leases')
      .addColumn('mkey', 'bigint', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('expires_ms', 'bigint')
      .addColumn('record', 'text', (c) => c.notNull())
      .addColumn('rev', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('leases_pk', ['mkey', 'subject'])
      .execute();
    await db.schema.createIndex('leases_rev').on('leases').columns(['mkey', 'rev']).execute();
  },
};

const migrations: Record<string, Migration> = { '0001_initial': initial };

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Brings the database to the newest schema; refuses one written by a newer Vigil. */
export async function migrate(db: Kysely<unknown>): Promise<void> {
  const migrator = new Migrator({ db, provider, migrationTableName: 'vigil_migrations', migrationLockTableName: 'vigil_migrations_lock' });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`cannot migrate the PostgreSQL schema${failed ? ` (migration ${failed})` : ''}: ${(error as Error).message}`, { cause: error });
  }
}
