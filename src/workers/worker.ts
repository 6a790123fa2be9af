// Workers (sdk.worker, `vigil worker …`): create a worker folder from a template,
// bundle it, and deploy, list, inspect, delete it and manage its secrets on
// one of two targets with the same calls: the user's own account (wrangler,
// when `vigil worker setup` stored credentials in vault scope `worker`) or
// the managed edge of the Vigil server at api_url.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cloudCall, cloudTarget } from '../cloud/cloud-target.ts';
import type { SdkContext } from '../workspace/context.ts';
import { invalid, VigilError } from '../errors/vigil-error.ts';
import { confined } from '../workspace/confine.ts';
import { vaultDelete, vaultGet, vaultSet } from '../vault/vault.ts';
import { bundleWorker } from './bundle.ts';
import { type OwnAccount, ownAccountTarget, type WorkerInfo } from './own-account.ts';
import { type TemplateName, templateFiles, templateNames } from './templates.ts';

export const workerScope = 'worker';
const NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const KEY = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function checkName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || !NAME.test(name)) throw invalid(field, `must be 1-63 lower-case letters, digits or "-"; got ${JSON.stringify(name ?? null)}`);
  return name;
}

function checkKey(key: unknown): string {
  if (typeof key !== 'string' || !KEY.test(key)) throw invalid('key', `must be a binding name (letters, digits, "_"; not starting with a digit); got ${JSON.stringify(key ?? null)}`);
  return key;
}

/** The cron triggers of the worker's wrangler.toml ([triggers] crons = [...]), for the managed edge. */
export function cronsOf(dir: string): string[] {
  const file = join(dir, 'wrangler.toml');
  if (!existsSync(file)) return [];
  const match = /^\s*crons\s*=\s*\[([^\]]*)\]/m.exec(readFileSync(file, 'utf8'));
  return match ? [...match[1]!.matchAll(/"([^"]*)"|'([^']*)'/g)].map((m) => m[1] ?? m[2]!) : [];
}

export function ownAccount(env: NodeJS.ProcessEnv): OwnAccount | undefined {
  const accountId = vaultGet('account_id', { scope: workerScope }, env);
  const apiToken = vaultGet('api_token', { scope: workerScope }, env);
  return accountId && apiToken ? { accountId, apiToken } : undefined;
}

export function workerSetup(env: NodeJS.ProcessEnv, accountId: string, apiToken: string): void {
  if (!/^[A-Za-z0-9]{8,64}$/.test(accountId)) throw invalid('account_id', 'must be the account id (8-64 letters and digits)');
  if (apiToken.trim().length < 8) throw invalid('api_token', 'must be an API token (at least 8 characters)');
  vaultSet('account_id', accountId, { scope: workerScope }, env);
  vaultSet('api_token', apiToken.trim(), { scope: workerScope }, env);
}

export function workerSetupClear(env: NodeJS.ProcessEnv): boolean {
  const a = vaultDelete('account_id', { scope: workerScope }, env);
  const b = vaultDelete('api_token', { scope: workerScope }, env);
  return a || b;
}

/** The calls of sdk.worker and `vigil worker`, bound to a workspace. */
export function workerCalls(ctx: SdkContext) {
  const workersDir = join(ctx.projectRoot, '.vigil', 'workers');
  // A worker's folder is written, bundled and deployed from inside the project only (no symlink out).
  const dirOf = (name: string) => confined(ctx.projectRoot, join('.vigil', 'workers', checkName(name)), 'name', 'the project');
  const own = () => {
    const account = ownAccount(ctx.env);
    return account ? ownAccountTarget(account, workersDir, ctx.env) : undefined;
  };
  const edge = () => cloudTarget(ctx);
  const path = (name: string, rest = '') => `/workers/${encodeURIComponent(checkName(name))}${rest}`;

  return {
    create(name: string, options: { template?: string } = {}): { name: string; path: string } {
      const dir = dirOf(name);
      const template = (options?.template ?? 'fetch') as TemplateName;
      if (!templateNames.includes(template)) throw invalid('template', `must be one of ${templateNames.join(', ')}; got ${JSON.stringify(options?.template)}`);
      if (existsSync(dir)) throw new VigilError('INVALID_ARGUMENT', `name: a worker folder already exists at ${dir}`, { field: 'name' });
      for (const [rel, text] of Object.entries(templateFiles(name, template))) {
        mkdirSync(dirname(join(dir, rel)), { recursive: true });
        writeFileSync(join(dir, rel), text);
      }
      return { name, path: dir };
    },
    async deploy(name: string, options: { minify?: boolean } = {}): Promise<{ name: string; url: string; deployed: boolean }> {
      const dir = dirOf(name);
      if (!existsSync(dir)) throw new VigilError('NOT_FOUND', `no worker folder ${dir} (create it with worker.create)`);
      const minify = options?.minify === true;
      const bundle = await bundleWorker(dir, minify);
      const target = own();
      if (target) return target.deploy(name, bundle, minify);
      return cloudCall(() => edge().request('PUT', path(name), { script: bundle, crons: cronsOf(dir) }));
    },
    async list(): Promise<WorkerInfo[]> {
      const target = own();
      return target ? target.list() : cloudCall(() => edge().request<WorkerInfo[]>('GET', '/workers'));
    },
    async status(name: string): Promise<WorkerInfo> {
      const target = own();
      return target ? target.status(checkName(name)) : cloudCall(() => edge().request<WorkerInfo>('GET', path(name)));
    },
    async delete(name: string): Promise<{ deleted: boolean }> {
      const target = own();
      return target ? target.delete(checkName(name)) : cloudCall(() => edge().request<{ deleted: boolean }>('DELETE', path(name)));
    },
    secret: {
      async set(workerName: string, key: string, value: string): Promise<void> {
        checkName(workerName, 'workerName');
        checkKey(key);
        if (typeof value !== 'string') throw invalid('value', 'must be text');
        const target = own();
        if (target) await target.setSecret(workerName, key, value);
        else await cloudCall(() => edge().request('PUT', path(workerName, `/secrets/${key}`), { value }));
      },
      async delete(workerName: string, key: string): Promise<void> {
        checkName(workerName, 'workerName');
        checkKey(key);
        const target = own();
        if (target) await target.deleteSecret(workerName, key);
        else await cloudCall(() => edge().request('DELETE', path(workerName, `/secrets/${key}`)));
      },
      async list(workerName: string): Promise<string[]> {
        checkName(workerName, 'workerName');
        const target = own();
        return target ? target.listSecrets(workerName) : cloudCall(() => edge().request<string[]>('GET', path(workerName, '/secrets')));
      },
    },
  };
}
