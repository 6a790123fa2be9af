// A PostgreSQL server of a run's own: initdb in a temporary folder, started
// on a free port (loopback, trust, no fsync), so a fault may restart or stop
// it without touching the machine's shared server that other test files use.
// As root, initdb and pg_ctl run as the `postgres` user (PostgreSQL refuses
// root). stop() ends it at once and removes the folder.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answersAt } from './postgres.ts';
import { stablePort } from './server-process.ts';

export interface PgInstance {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly adminUrl: string;
  readonly port: number;
  /** Restarts the server (every session ends) and waits until it answers. */
  restart(): Promise<void>;
  /** Stops it at once and removes its folder. */
  stop(): Promise<void>;
}

const binDir = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/14/bin'].find((d) => existsSync(join(d, 'initdb')));

/** Undefined when a server can be made here; otherwise why not. */
export function pgInstanceUnavailable(): string | undefined {
  if (!binDir) return 'no initdb under /usr/lib/postgresql/<version>/bin';
  if (process.getuid?.() === 0) {
    try {
      execFileSync('id', ['-u', 'postgres'], { stdio: 'pipe' });
    } catch {
      return 'running as root and there is no postgres user to run initdb as';
    }
  }
  return undefined;
}

export async function startPgInstance(): Promise<PgInstance> {
  const why = pgInstanceUnavailable();
  if (why) throw new Error(`cannot start a PostgreSQL server of the run's own: ${why}`);
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'vigil-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : join(binDir!, tool), asRoot ? ['-u', 'postgres', '--', join(binDir!, tool), ...args] : args, { stdio: 'pipe', timeout: 120_000, cwd: dir });
  const port = await stablePort();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100`;
  const answers = () => answersAt(adminUrl);
  const untilAnswers = async () => {
    for (let i = 0; i < 300 && !(await answers()); i++) await new Promise((r) => setTimeout(r, 100));
  };
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
    await untilAnswers();
  } catch (error) {
    try {
      run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
    } catch {
      // Never started.
    }
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`cannot start a PostgreSQL server of the run's own: ${(error as { stderr?: Buffer }).stderr ?? (error as Error).message}`);
  }
  return {
    adminUrl,
    port,
    async restart() {
      run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-m', 'fast', '-w', 'restart']);
      await untilAnswers();
    },
    async stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
