// Creates the tables (table-definitions.ts) on a new database (idempotent)
// and checks the version of an existing one.
import { qb } from './query-builder.ts';
import type { SqlDriver } from './sql-driver.ts';
import { createTable, tableDefinitions } from './table-definitions.ts';

export const schemaVersion = 1;

const statements = tableDefinitions.map((table) => createTable(qb.schema, table, 'sqlite'));

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
