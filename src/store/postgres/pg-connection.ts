// Opens the PostgreSQL database named by a postgres:// URL: a pool for
// queries through kysely, int8 read as a JS number (keys, seqs and
// millisecond times all stay below 2^53), and the schema migrated.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { migrate } from './migrations.ts';
import type { PgDatabase } from './pg-tables.ts';
import { redactCredentials } from '../../net/redact.ts';

const int8 = 20;
export const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === int8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export interface PgConnection {
  readonly url: string;
  readonly pool: pg.Pool;
  readonly db: Kysely<PgDatabase>;
  /** A session of its own (LISTEN, advisory locks): not shared with the pool. */
  session(): Promise<pg.Client>;
  close(): Promise<void>;
}

export async function openPostgres(url: string, poolSize = 8): Promise<PgConnection> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: pgTypes });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const db = new Kysely<PgDatabase>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrate(db as Kysely<unknown>);
  } catch (error) {
    await db.destroy().catch(() => {});
    throw new Error(`cannot use the PostgreSQL store ${redactCredentials(url)}: ${(error as Error).message}`, { cause: error });
  }
  return {
    url,
    pool,
    db,
    async session() {
      const client = new pg.Client({ connectionString: url, types: pgTypes });
      await client.connect();
      return client;
    },
    close: () => db.destroy(),
  };
}
