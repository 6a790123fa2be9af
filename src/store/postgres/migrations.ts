// The PostgreSQL schema as kysely migrations, applied on start, built from
// the tables' one definition (../table-definitions.ts). Each node of
// a cluster runs them; PostgreSQL's transactional DDL and the Migrator's own
// lock make concurrent starts safe.
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import { cloudTablesOf0002, clusterTablesOf0002, monitorOwnerTables, workerClusterTables, workerTables } from '../cloud-table-definitions.ts';
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

// The cloud API's rows, shared by every node, and the nodes' heartbeats (/discover).
const cloudAndNodes: Migration = {
  async up(db: Kysely<unknown>) {
    await createAll(db, cloudTablesOf0002);
    await createAll(db, clusterTablesOf0002);
  },
};

// Timer ownership as a lease per monitor, renewed by its owner (src/cluster/ownership.ts).
const monitorOwners: Migration = {
  async up(db: Kysely<unknown>) {
    await createAll(db, monitorOwnerTables);
  },
};

// The managed edge's workers, shared by every node, and the claims that run each cron tick once.
const workers: Migration = {
  async up(db: Kysely<unknown>) {
    await createAll(db, workerTables);
    await createAll(db, workerClusterTables);
    // The bytes of bodies a key has waiting are summed in the database on a cluster (delivery-queue.ts).
    await db.schema.createIndex('cloud_event_bodies_by_key').on('cloud_event_bodies').columns(['key_id']).execute();
  },
};

// Applied in the order of their names; numbers need not be contiguous.
const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_cloud_and_nodes': cloudAndNodes,
  '0003_monitor_owners': monitorOwners,
  '0004_workers': workers,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Brings the database to the newest schema; refuses one written by a newer Vigil. */
export async function migrate(db: Kysely<unknown>): Promise<void> {
  // Unordered: migrations written on parallel branches (0003, 0004) each touch their own tables, and a
  // database that has a later one already still takes an earlier one that a newer Vigil brings.
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: 'vigil_migrations',
    migrationLockTableName: 'vigil_migrations_lock',
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`cannot migrate the PostgreSQL schema${failed ? ` (migration ${failed})` : ''}: ${(error as Error).message}`, { cause: error });
  }
}
