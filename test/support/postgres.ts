// A PostgreSQL database of its own for each test: created on the local
// server (127.0.0.1:5432, trust auth) and dropped afterwards. The server is
// started when it is down; where PostgreSQL cannot run at all, `postgresFor`
// says why and the tests skip with that message (or fail, under CI).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { requirement } from './requirements.ts';

export const adminUrl = process.env.VIGIL_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Whether a PostgreSQL server answers a query at `url`. */
export async function answersAt(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Undefined when PostgreSQL answers (started here if it was down); otherwise why it cannot. */
export async function postgresUnavailable(): Promise<string | undefined> {
  if (await answersAt(adminUrl)) return undefined;
  // A server named by VIGIL_TEST_PG is not this machine's to start.
  if (process.env.VIGIL_TEST_PG) return `nothing answers at VIGIL_TEST_PG (${adminUrl})`;
  if (!existsSync('/etc/postgresql')) return 'PostgreSQL is not installed here (no /etc/postgresql) and nothing answers at 127.0.0.1:5432';
  const [version] = readdirSync('/etc/postgresql');
  try {
    execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version!, 'main', 'start'], { stdio: 'pipe', timeout: 30_000 });
  } catch (error) {
    const text = `${(error as { stderr?: Buffer }).stderr ?? ''}`;
    if (!text.includes('already running')) return `PostgreSQL ${version} is installed but would not start: ${text.trim() || (error as Error).message}`;
  }
  for (let i = 0; i < 50; i++) {
    if (await answersAt(adminUrl)) return undefined;
    await new Promise((r) => setTimeout(r, 200));
  }
  return `PostgreSQL ${version} started but does not answer at 127.0.0.1:5432`;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>, server = adminUrl): Promise<T> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

/** A database of its own on the machine's server, or on `server` (an admin URL, e.g. a run's own instance: pg-instance.ts). */
export async function createTestDatabase(server = adminUrl): Promise<TestDatabase> {
  const name = `vigil_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`), server);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    // FORCE ends the sessions of nodes that were killed and not yet noticed by the server.
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`), server).then(() => {}),
  };
}

/**
 * Undefined when PostgreSQL answers (started here if it was down); otherwise
 * why not, after a warning that `tests` are skipped. Under CI=true it throws
 * instead (test/support/requirements.ts): CI does not pass on skipped cluster tests.
 */
export async function postgresFor(tests: string): Promise<string | undefined> {
  return requirement('postgresql', await postgresUnavailable(), tests);
}
