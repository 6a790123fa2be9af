// The PostgreSQL schema as kysely migrations, applied on start, built from
// the tables' one definition (../table-definitions.ts). Each node of
// a cluster runs them; PostgreSQL's transactional DDL and the Migrator's own
// lock make concurrent starts safe.
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import { cloudTableDefinitions, clusterTableDefinitions } from '../cloud-table-definitions.ts';
import { createTable, type TableDefinition, tableDefinitions } from '../table-definitions.ts';

// Version 1 is the shared table definition as it stood then; a later version
// is a migration of its own here, and the definition changes with it.
const initial: Migration = {
  async up(db: Kysely<unknown>) {
    for (const table of tableDefinitions) {
      await createTable(db.schema, table, 'postgres').execute();
      if (table.name === 'monitors') await sql`create sequence monitor_keys`.execute(db);
      for (const index of table.indexes ?? []) await db.schema.createIndex(index.name).on(table.name).columns([...index.columns]).execute();
    }
  },
};

const createAll = async (db: Kysely<unknown>, tables: readonly TableDefinition[]) => {
  for (const table of tables) {
    await createTable(db.schema, table, 'postgres').execute();
    for (const index of table.indexes ?? []) await db.schema.createIndex(index.name).on(table.name).columns([...index.columns]).execute();
  }
};

const clusterTables = (...names: string[]) => clusterTableDefinitions.filter((t) => names.includes(t.name));

// The cloud API's rows, shared by every node, and the nodes' heartbeats (/discover).
const cloudAndNodes: Migration = {
  async up(db: Kysely<unknown>) {
    await createAll(db, cloudTableDefinitions);
    await createAll(db, clusterTables('cluster_nodes'));
  },
};

// Timer ownership as a lease per monitor, renewed by its owner (src/cluster/ownership.ts).
const monitorOwners: Migration = {
  async up(db: Kysely<unknown>) {
    await createAll(db, clusterTables('monitor_owners'));
  },
};

const migrations: Record<string, Migration> = { '0001_initial': initial, '0002_cloud_and_nodes': cloudAndNodes, '0003_monitor_owners': monitorOwners };

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
