// One definition of the tables (src/store/table-definitions.ts): a state file
// made by SQLite and a database migrated on PostgreSQL must hold the same
// tables, columns, nullability and keys, PostgreSQL adding exactly the
// columns the definition marks as the cluster's. A migration written for one
// dialect alone fails here.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/postgres/migrations.ts';
import { applySchema } from '../../src/store/schema.ts';
import { openSqlDriver } from '../../src/store/sql-driver.ts';
import { CloudStore } from '../../src/cloud/cloud-store.ts';
import { cloudTableDefinitions, clusterTableDefinitions } from '../../src/store/cloud-table-definitions.ts';
import { Store } from '../../src/store/store.ts';
import { tableDefinitions } from '../../src/store/table-definitions.ts';
import { createTestDatabase, postgresFor, type TestDatabase } from '../support/postgres.ts';

interface Column {
  name: string;
  type: 'integer' | 'text';
  notNull: boolean;
}
type Shape = Record<string, { columns: Column[]; primaryKey: string[] }>;

// A primary key column is NOT NULL on PostgreSQL by rule; SQLite lets a text key be NULL unless told.
function shapeOf(driver: ReturnType<typeof openSqlDriver>): Shape {
  const shape: Shape = {};
  const tables = driver.prepare("select name from sqlite_master where type = 'table' order by name").all<{ name: string }>([]);
  for (const { name } of tables) {
    const info = driver.prepare(`pragma table_info("${name}")`).all<{ name: string; type: string; notnull: number; pk: number }>([]);
    shape[name] = {
      columns: info.map((c) => ({ name: c.name, type: c.type.toLowerCase() as Column['type'], notNull: c.notnull === 1 || c.pk > 0 })),
      primaryKey: info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name),
    };
  }
  return shape;
}

function sqliteShape(): Shape {
  const driver = openSqlDriver(':memory:');
  applySchema(driver);
  const shape = shapeOf(driver);
  driver.close();
  return shape;
}

/** The tables the cloud store makes in a server's SQLite store (src/cloud/cloud-store.ts). */
function sqliteCloudShape(): Shape {
  const store = Store.open({ path: ':memory:' });
  new CloudStore(store);
  const shape = shapeOf(store.driver);
  store.close();
  return shape;
}

async function postgresShape(url: string): Promise<Shape> {
  const pool = new pg.Pool({ connectionString: url });
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrate(db);
    const columns = await pool.query(
      `select table_name, column_name, data_type, is_nullable from information_schema.columns
        where table_schema = 'public' and table_name not like 'vigil_migrations%' order by table_name, ordinal_position`,
    );
    const keys = await pool.query(
      `select tc.table_name, kcu.column_name from information_schema.table_constraints tc
         join information_schema.key_column_usage kcu on kcu.constraint_name = tc.constraint_name and kcu.table_name = tc.table_name
        where tc.table_schema = 'public' and tc.constraint_type = 'PRIMARY KEY' and tc.table_name not like 'vigil_migrations%' order by tc.table_name, kcu.ordinal_position`,
    );
    const shape: Shape = {};
    for (const row of columns.rows) {
      shape[row.table_name] ??= { columns: [], primaryKey: [] };
      shape[row.table_name]!.columns.push({ name: row.column_name, type: row.data_type === 'bigint' ? 'integer' : row.data_type, notNull: row.is_nullable === 'NO' });
    }
    for (const row of keys.rows) shape[row.table_name]!.primaryKey.push(row.column_name);
    return shape;
  } finally {
    await db.destroy();
  }
}

const unavailable = await postgresFor('the schema agreement test');

describe.skipIf(unavailable !== undefined)('the store schema', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('is the same on SQLite and PostgreSQL, but for the columns the cluster adds', async () => {
    const sqlite = sqliteShape();
    const postgres = await postgresShape(database.url);
    const clusterOnly = new Set(tableDefinitions.flatMap((t) => t.columns.filter((c) => c.cluster).map((c) => `${t.name}.${c.name}`)));
    const cloud = cloudTableDefinitions.map((t) => t.name);
    const clusterTables = clusterTableDefinitions.map((t) => t.name);

    const storeTables = Object.keys(postgres).filter((t) => !cloud.includes(t) && !clusterTables.includes(t));
    expect(storeTables.sort()).toEqual(Object.keys(sqlite).sort());
    expect(Object.keys(postgres)).toEqual(expect.arrayContaining([...cloud, ...clusterTables]));
    const sqliteCloud = sqliteCloudShape();
    for (const table of cloud) expect({ table, ...postgres[table] }).toEqual({ table, ...sqliteCloud[table] });
    for (const [table, shape] of Object.entries(postgres)) {
      if (!storeTables.includes(table)) continue;
      const shared = shape.columns.filter((c) => !clusterOnly.has(`${table}.${c.name}`));
      expect({ table, columns: shared, primaryKey: shape.primaryKey }).toEqual({ table, ...sqlite[table] });
    }
    expect([...clusterOnly].every((c) => postgres[c.split('.')[0]!]?.columns.some((col) => col.name === c.split('.')[1]))).toBe(true);
  });
});
