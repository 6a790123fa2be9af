// Creates the tables on a new database (idempotent) and checks the version
// of an existing one.
import { sql } from 'kysely';
import { qb } from './query-builder.ts';
import type { SqlDriver } from './sql-driver.ts';

export const schemaVersion = 1;

const statements = [
  qb.schema
    .createTable('monitors')
    .ifNotExists()
    .addColumn('key', 'integer', (c) => c.primaryKey())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('owner_token_hash', 'text', (c) => c.notNull())
    .addColumn('subscribe_token_hash', 'text')
    .addColumn('stats', 'text', (c) => c.notNull()),
  qb.schema
    .createTable('observations')
    .ifNotExists()
    .addColumn('mkey', 'integer', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
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
    .modifyEnd(sql`without rowid`),
  qb.schema
    .createTable('subjects')
    .ifNotExists()
    .addColumn('mkey', 'integer', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('subjects_pk', ['mkey', 'subject'])
    .modifyEnd(sql`without rowid`),
  qb.schema
    .createTable('contradictions')
    .ifNotExists()
    .addColumn('mkey', 'integer', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addPrimaryKeyConstraint('contradictions_pk', ['mkey', 'seq']),
  qb.schema
    .createTable('subscriptions')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('mkey', 'integer', (c) => c.notNull())
    .addColumn('subscriber', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('cursor', 'integer', (c) => c.notNull())
    .addColumn('mute_deadline_ms', 'integer')
    .addColumn('record', 'text', (c) => c.notNull())
    .addUniqueConstraint('subscriptions_subscriber', ['mkey', 'subscriber']),
  qb.schema
    .createTable('leases')
    .ifNotExists()
    .addColumn('mkey', 'integer', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('expires_ms', 'integer')
    .addColumn('record', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('leases_pk', ['mkey', 'subject']),
];

export function applySchema(driver: SqlDriver): void {
  const current = driver.prepare('PRAGMA user_version').get<{ user_version: number }>([])?.user_version ?? 0;
  if (current > schemaVersion) {
    throw new Error(`the state file was written by a newer Vigil (schema ${current}; this one knows ${schemaVersion})`);
  }
  driver.exec('BEGIN');
  try {
    for (const statement of statements) driver.exec(statement.compile().sql);
    driver.exec(`PRAGMA user_version = ${schemaVersion}`);
    driver.exec('COMMIT');
  } catch (error) {
    driver.exec('ROLLBACK');
    throw error;
  }
}
