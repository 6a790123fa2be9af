// The one definition of the store's tables. SQLite creates them from it
// (schema.ts) and PostgreSQL's first migration does too (postgres/migrations.ts);
// test/store/schema-agreement.test.ts checks that the databases built both
// ways hold the same tables and columns. Columns and indexes marked `cluster`
// exist only on PostgreSQL, where several nodes share the database.
import { type CreateTableBuilder, type SchemaModule, sql } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

export interface ColumnDefinition {
  readonly name: string;
  /** Integers are 64-bit on both: SQLite's INTEGER, PostgreSQL's bigint. */
  readonly type: 'integer' | 'text';
  readonly notNull?: boolean;
  readonly primaryKey?: boolean;
  readonly unique?: boolean;
  readonly cluster?: boolean;
}

export interface TableDefinition {
  readonly name: string;
  readonly columns: readonly ColumnDefinition[];
  readonly primaryKey?: { readonly name: string; readonly columns: readonly string[] };
  readonly unique?: { readonly name: string; readonly columns: readonly string[] };
  readonly indexes?: readonly { readonly name: string; readonly columns: readonly string[]; readonly cluster?: boolean }[];
  /** SQLite stores the rows in the primary key's b-tree (no rowid). */
  readonly withoutRowid?: boolean;
}

const text = (name: string, notNull = true): ColumnDefinition => ({ name, type: 'text', notNull });
const integer = (name: string, notNull = true): ColumnDefinition => ({ name, type: 'integer', notNull });
/** The per-row change counter every cluster write transaction moves (docs/scaling.md). */
const rev: ColumnDefinition = { name: 'rev', type: 'integer', notNull: true, cluster: true };

export const tableDefinitions: readonly TableDefinition[] = [
  {
    name: 'monitors',
    columns: [
      { name: 'key', type: 'integer', primaryKey: true, notNull: true },
      { name: 'id', type: 'text', notNull: true, unique: true },
      text('status'),
      text('definition'),
      text('owner_token_hash'),
      text('subscribe_token_hash', false),
      text('stats'),
      // The seq counter: `head` is the highest seq stored; `rev` moves under this row's lock.
      { name: 'head', type: 'integer', notNull: true, cluster: true },
      rev,
    ],
  },
  {
    name: 'observations',
    columns: [
      integer('mkey'),
      integer('seq'),
      text('type'),
      text('subject', false),
      text('actor'),
      text('tier'),
      text('origin'),
      text('horizon'),
      text('time'),
      text('source_ref', false),
      text('body'),
    ],
    // A rowid table, its key a separate index in SQLite: a WITHOUT ROWID table keeps whole rows in its
    // interior pages too (four 700-byte observations a page), so every append rewrote a chain of
    // six or more of them (bench/README.md, issue 46). Schema 2 (schema.ts) rebuilt older files' table.
    primaryKey: { name: 'observations_pk', columns: ['mkey', 'seq'] },
  },
  {
    name: 'subjects',
    columns: [integer('mkey'), text('subject'), rev],
    primaryKey: { name: 'subjects_pk', columns: ['mkey', 'subject'] },
    withoutRowid: true,
  },
  {
    name: 'contradictions',
    columns: [integer('mkey'), integer('seq'), text('subject', false)],
    primaryKey: { name: 'contradictions_pk', columns: ['mkey', 'seq'] },
  },
  {
    name: 'subscriptions',
    columns: [
      { name: 'id', type: 'text', primaryKey: true, notNull: true },
      integer('mkey'),
      text('subscriber'),
      text('state'),
      text('token_hash'),
      integer('cursor'),
      integer('mute_deadline_ms', false),
      text('record'),
      rev,
    ],
    unique: { name: 'subscriptions_subscriber', columns: ['mkey', 'subscriber'] },
    indexes: [{ name: 'subscriptions_rev', columns: ['mkey', 'rev'], cluster: true }],
  },
  {
    name: 'leases',
    columns: [integer('mkey'), text('subject'), text('state'), integer('expires_ms', false), text('record'), rev],
    primaryKey: { name: 'leases_pk', columns: ['mkey', 'subject'] },
    indexes: [{ name: 'leases_rev', columns: ['mkey', 'rev'], cluster: true }],
  },
];

/** Whether a column or index exists in a dialect. */
export function inDialect(part: { readonly cluster?: boolean }, dialect: Dialect): boolean {
  return dialect === 'postgres' || !part.cluster;
}

/** `create table` for one table in one dialect (SQLite's with `if not exists`, as it runs at every open). */
export function createTable(schema: SchemaModule, table: TableDefinition, dialect: Dialect): CreateTableBuilder<string, string> {
  let builder = schema.createTable(table.name);
  if (dialect === 'sqlite') builder = builder.ifNotExists();
  for (const column of table.columns) {
    if (!inDialect(column, dialect)) continue;
    const type = column.type === 'integer' && dialect === 'postgres' ? 'bigint' : column.type;
    builder = builder.addColumn(column.name, type, (c) => {
      let spec = c;
      if (column.primaryKey) spec = spec.primaryKey();
      if (column.notNull) spec = spec.notNull();
      if (column.unique) spec = spec.unique();
      return spec;
    });
  }
  if (table.primaryKey) builder = builder.addPrimaryKeyConstraint(table.primaryKey.name, [...table.primaryKey.columns] as never[]);
  if (table.unique) builder = builder.addUniqueConstraint(table.unique.name, [...table.unique.columns] as never[]);
  if (table.withoutRowid && dialect === 'sqlite') builder = builder.modifyEnd(sql`without rowid`);
  return builder;
}
