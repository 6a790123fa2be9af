// The user's own edge account: `wrangler` on PATH, with the account id and
// API token that `vigil worker setup` stored in the vault (scope `worker`),
// passed as CLOUDFLARE_ACCOUNT_ID / CLOUDFLARE_API_TOKEN. Wrangler has no
// "list workers" command, so list and status read the deployment records this
// project wrote (.vigil/workers/<name>/deployment.json).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { VigilError } from '../errors/vigil-error.ts';
import { compatibilityDate } from './templates.ts';

export interface OwnAccount {
  accountId: string;
  apiToken: string;
}

export interface WorkerInfo {
  name: string;
  id: string;
  created_on: string;
  modified_on: string;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function wrangler(account: OwnAccount, cwd: string, args: string[], env: NodeJS.ProcessEnv, stdin?: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn('wrangler', args, {
      cwd,
      env: { ...env, CLOUDFLARE_ACCOUNT_ID: account.accountId, CLOUDFLARE_API_TOKEN: account.apiToken },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new VigilError('WORKER_FAILED', 'wrangler is not on PATH: install it (npm i -g wrangler) or remove the own-account setup with "vigil worker setup --clear"')
          : new VigilError('WORKER_FAILED', `cannot run wrangler: ${error.message}`),
      ),
    );
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

async function run(account: OwnAccount, cwd: string, args: string[], env: NodeJS.ProcessEnv, stdin?: string): Promise<Ran> {
  const ran = await wrangler(account, cwd, args, env, stdin);
  if (ran.code !== 0) {
    const tail = (ran.stderr || ran.stdout).trim().split('\n').slice(-3).join(' | ');
    throw new VigilError('WORKER_FAILED', `wrangler ${args[0]} failed (exit ${ran.code}): ${tail}`, { args });
  }
  return ran;
}

const recordPath = (dir: string) => join(dir, 'deployment.json');

function readRecord(dir: string): WorkerInfo | undefined {
  try {
    return JSON.parse(readFileSync(recordPath(dir), 'utf8')) as WorkerInfo;
  } catch {
    return undefined;
  }
}

export function ownAccountTarget(account: OwnAccount, workersDir: string, env: NodeJS.ProcessEnv) {
  const dirOf = (name: string) => join(workersDir, name);
  const known = (name: string): WorkerInfo => {
    const record = readRecord(dirOf(name));
    if (!record) throw new VigilError('NOT_FOUND', `no deployed worker "${name}" in ${workersDir} (deploy it first)`);
    return record;
  };
  return {
    async deploy(name: string, bundle: string, minify: boolean): Promise<{ name: string; url: string; deployed: boolean }> {
      const dir = dirOf(name);
      mkdirSync(join(dir, 'dist'), { recursive: true });
      writeFileSync(join(dir, 'dist', 'index.js'), bundle);
      const args = ['deploy', 'dist/index.js', '--name', name, '--compatibility-date', compatibilityDate, ...(minify ? ['--minify'] : [])];
      const ran = await run(account, dir, args, env);
      const url = /https:\/\/\S+/.exec(ran.stdout)?.[0] ?? `https://${name}.workers.dev`;
      const now = new Date().toISOString();
      const previous = readRecord(dir);
      const record: WorkerInfo = { name, id: previous?.id ?? randomUUID().replaceAll('-', ''), created_on: previous?.created_on ?? now, modified_on: now };
      writeFileSync(recordPath(dir), `${JSON.stringify(record, null, 2)}\n`);
      return { name, url, deployed: true };
    },
    list(): WorkerInfo[] {
      if (!existsSync(workersDir)) return [];
      return readdirSync(workersDir)
        .map((name) => readRecord(dirOf(name)))
        .filter((r): r is WorkerInfo => r !== undefined)
        .sort((a, b) => a.name.localeCompare(b.name));
    },
    status: (name: string): WorkerInfo => known(name),
    async delete(name: string): Promise<{ deleted: boolean }> {
      known(name);
      await run(account, dirOf(name), ['delete', '--name', name, '--force'], env);
      rmSync(recordPath(dirOf(name)), { force: true });
      return { deleted: true };
    },
    async setSecret(name: string, key: string, value: string): Promise<void> {
      known(name);
      await run(account, dirOf(name), ['secret', 'put', key, '--name', name], env, value);
    },
    async deleteSecret(name: string, key: string): Promise<void> {
      known(name);
      await run(account, dirOf(name), ['secret', 'delete', key, '--name', name], env, 'y\n');
    },
    async listSecrets(name: string): Promise<string[]> {
      known(name);
      const ran = await run(account, dirOf(name), ['secret', 'list', '--name', name, '--format', 'json'], env);
      try {
        return (JSON.parse(ran.stdout) as Array<{ name: string }>).map((s) => s.name).sort();
      } catch {
        throw new VigilError('WORKER_FAILED', `wrangler secret list printed no JSON: ${ran.stdout.slice(0, 200)}`);
      }
    },
  };
}
