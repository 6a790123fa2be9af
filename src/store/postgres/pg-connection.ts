// Opens the PostgreSQL database named by a postgres:// URL: a pool for
// queries through kysely, int8 read as a JS number (keys, seqs and
// millisecond times all stay below 2^53), and the schema migrated.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { migrate } from './migrations.ts';
import type { PgDatabase } from './pg-tables.ts';
import { redactCredentials } from '../../net/redact.ts';
import { PgPipeline } from './pg-pipeline.ts';

const int8 = 20;
export const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === int8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export interface PgConnection {
  readonly url: string;
  readonly pool: pg.Pool;
  readonly db: Kysely<PgDatabase>;
  /** The session batches are written on, statements pipelined (pg-pipeline.ts). */
  readonly pipeline: PgPipeline;
  /** A session of its own (LISTEN, timer ownership): not shared with the pool. */
  session(): Promise<pg.Client>;
  close(): Promise<void>;
}

/**
 * Every session a node opens gives up instead of hanging: on connecting (an address that accepts
 * and never answers), on a statement (server side), on a reply (client side: a server that stopped
 * answering), inside an idle transaction (a node paused mid-transaction holds its row locks for
 * 3 s at most: PostgreSQL ends its session), and on a row lock (a write waiting on such a node
 * gives up after 2 s and runs again as a lost race).
 */
export const sessionLimits = {
  connectionTimeoutMillis: 5_000,
  statement_timeout: 30_000,
  query_timeout: 35_000,
  idle_in_transaction_session_timeout: 3_000,
  lock_timeout: 2_000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 2_000,
} as const;

/** Connection failures, as pg reports them: the database is unreachable, restarting or refusing sessions. */
export function isStoreFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^(08|53|57|58)|^E(CONNREFUSED|CONNRESET|TIMEDOUT|PIPE|HOSTUNREACH|NETUNREACH|NOTFOUND|AI_AGAIN)$/.test(code)) return true;
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error/i.test(message);
}

/** `poolSize`: the most pooled sessions (a cluster node's --store-sessions; its default lives in service/defaults.ts). */
export async function openPostgres(url: string, poolSize: number): Promise<PgConnection> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: pgTypes, ...sessionLimits });
  // A client that loses its server (pg_terminate_backend: 57P01, a restart, a cut network) must not
  // crash the process. An idle client reports to the pool's listener; one checked out by a query has
  // no listener of pg-pool's, so each gets its own: the failed query reports the error to its caller.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<PgDatabase>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrate(db as Kysely<unknown>);
  } catch (error) {
    await db.destroy().catch(() => {});
    throw new Error(`cannot use the PostgreSQL store ${redactCredentials(url)}: ${(error as Error).message}`, { cause: error });
  }
  const pipeline = new PgPipeline({ connectionString: url, types: pgTypes, ...sessionLimits });
  return {
    url,
    pool,
    db,
    pipeline,
    async session() {
      const client = new pg.Client({ connectionString: url, types: pgTypes, ...sessionLimits });
      // Until its owner listens: an error right after connecting must not crash the process.
      client.on('error', () => {});
      await client.connect();
      return client;
    },
    close: async () => {
      await pipeline.close();
      await db.destroy();
    },
  };
}
