// Creates the tables (table-definitions.ts) on a new database (idempotent),
// checks the version of an existing one and brings an older one up to date.
import { qb } from './query-builder.ts';
import type { SqlDriver } from './sql-driver.ts';
import { createTable, tableDefinitions } from './table-definitions.ts';

export const schemaVersion = 2;

const statements = tableDefinitions.map((table) => createTable(qb.schema, table, 'sqlite'));

/**
 * Schema 1 → 2: `observations` was a WITHOUT ROWID table, which keeps whole rows in its interior
 * pages; it becomes a rowid table with the same columns and key (its index), rows copied in key order.
 */
function rebuildObservations(driver: SqlDriver): void {
  const observations = tableDefinitions.find((t) => t.name === 'observations')!;
  const columns = observations.columns.map((c) => c.name).join(', ');
  driver.exec(createTable(qb.schema, { ...observations, name: 'observations_rebuilt' }, 'sqlite').compile().sql);
  driver.exec(`insert into observations_rebuilt (${columns}) select ${columns} from observations order by mkey, seq`);
  driver.exec('drop table observations');
  driver.exec('alter table observations_rebuilt rename to observations');
}

/** What each version changes in a file written by the one before it (version 1 made the tables). */
const upgrades: ReadonlyArray<{ readonly to: number; readonly apply: (driver: SqlDriver) => void }> = [{ to: 2, apply: rebuildObservations }];

export function applySchema(driver: SqlDriver): void {
  const current = driver.prepare('PRAGMA user_version').get<{ user_version: number }>([])?.user_version ?? 0;
  if (current > schemaVersion) {
    throw new Error(`the state file was written by a newer Vigil (schema ${current}; this one knows ${schemaVersion})`);
  }
  driver.exec('BEGIN');
  try {
    // A new file (version 0) gets the tables as they are now; an older one is upgraded step by step first.
    if (current > 0) for (const upgrade of upgrades) if (upgrade.to > current) upgrade.apply(driver);
    for (const statement of statements) driver.exec(statement.compile().sql);
    driver.exec(`PRAGMA user_version = ${schemaVersion}`);
    driver.exec('COMMIT');
  } catch (error) {
    driver.exec('ROLLBACK');
    throw error;
  }
}
