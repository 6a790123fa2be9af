// `vigil worker create|deploy|list|status|delete|secret|setup`: the CLI face
// of src/workers. Secret values and the API token are read from stdin,
// never from argv (argv shows in `ps`).
import type { CAC } from 'cac';
import { applyBaseFlag } from './base-flag.ts';
import { sdkContext } from '../workspace/context.ts';
import { workerNamespace } from '../sdk/namespaces/worker.ts';
import { workerSetup, workerSetupClear } from '../workers/worker.ts';
import { UsageError } from './options.ts';
import { defineCommand } from './command.ts';
import { printJson, readStdin, runSdkCommand, unknownAction } from './sdk-command.ts';

const actions = ['create', 'deploy', 'list', 'status', 'delete', 'secret', 'setup'];

interface WorkerFlags {
  template?: unknown;
  minify?: boolean;
  accountId?: unknown;
  clear?: boolean;
  json?: boolean;
  base?: unknown;
}

export function registerWorkerCommands(cli: CAC): void {
  defineCommand(
    cli,
    'worker <action> [...args]',
    'Edge workers in .vigil/workers/: "create NAME", "deploy NAME", "list", "status NAME", "delete NAME", "secret set|delete|list NAME [KEY]" (value from stdin), "setup" (own account; API token from stdin)',
  )
    .option('--template <name>', 'create: fetch (default), scheduled or webhook')
    .option('--minify', 'deploy: minify the bundle')
    .option('--account-id <id>', 'setup: the account id of your own edge account')
    .option('--clear', 'setup: forget the own-account credentials (deploys go to the managed edge again)')
    .option('--base <url>', 'Server whose cloud API to use (default: VIGIL_API_URL, then api_url of vigil.yml, then VIGIL_BASE, then server.base)', { type: [String] })
    .option('--json', 'Print the result as JSON')
    .example('vigil worker create hello --template webhook && vigil worker deploy hello --minify')
    .action((action: string, args: string[], flags: WorkerFlags) =>
      runSdkCommand(async () => {
        if (!actions.includes(action)) unknownAction('worker', action, actions);
        applyBaseFlag(flags.base, { cloud: true });
        const ctx = sdkContext({ workspace: process.cwd() });
        const worker = workerNamespace(ctx);
        const arg = (i: number, what: string): string => {
          const value = args[i];
          if (value === undefined) throw new UsageError(`worker ${action}: needs ${what}`);
          return String(value);
        };
        const show = (value: unknown, text: () => string) => (flags.json ? printJson(value) : process.stdout.write(text()));
        switch (action) {
          case 'create': {
            const made = worker.create(arg(0, 'a NAME'), flags.template === undefined ? {} : { template: String(flags.template) });
            return show(made, () => `created ${made.path}\n`);
          }
          case 'deploy': {
            const result = await worker.deploy(arg(0, 'a NAME'), { minify: flags.minify === true });
            return show(result, () => `deployed ${result.name} at ${result.url}\n`);
          }
          case 'list': {
            const list = await worker.list();
            return show(list, () => list.map((w) => `${w.name}\t${w.id}\t${w.modified_on}\n`).join(''));
          }
          case 'status': {
            const info = await worker.status(arg(0, 'a NAME'));
            return show(info, () => `${info.name}\t${info.id}\tcreated ${info.created_on}\tmodified ${info.modified_on}\n`);
          }
          case 'delete': {
            const result = await worker.delete(arg(0, 'a NAME'));
            return show(result, () => `deleted ${args[0]}\n`);
          }
          case 'secret': {
            const sub = arg(0, 'set, delete or list');
            const name = arg(1, 'the worker NAME');
            if (sub === 'list') {
              const names = await worker.secret.list(name);
              return show(names, () => names.map((n) => `${n}\n`).join(''));
            }
            if (sub === 'set') {
              const key = arg(2, 'a KEY');
              if (process.stdin.isTTY) process.stderr.write('value (end with Ctrl-D):\n');
              const { MAX_VALUE } = await import('../vault/vault.ts');
              await worker.secret.set(name, key, (await readStdin('value', MAX_VALUE)).replace(/\r?\n$/, ''));
              return process.stderr.write(`set ${key} on ${name}\n`);
            }
            if (sub === 'delete') {
              const key = arg(2, 'a KEY');
              await worker.secret.delete(name, key);
              return process.stderr.write(`deleted ${key} from ${name}\n`);
            }
            throw new UsageError(`worker secret: unknown action "${sub}"; actions: set, delete, list`);
          }
          default: {
            if (flags.clear) {
              const removed = workerSetupClear(ctx.env);
              return process.stderr.write(removed ? 'own-account credentials removed; deploys go to the managed edge\n' : 'no own-account credentials were stored\n');
            }
            if (flags.accountId === undefined) throw new UsageError('worker setup: needs --account-id <id> (and the API token on stdin), or --clear');
            if (process.stdin.isTTY) process.stderr.write('API token (end with Ctrl-D):\n');
            const { MAX_VALUE } = await import('../vault/vault.ts');
            workerSetup(ctx.env, String(flags.accountId), (await readStdin('api_token', MAX_VALUE)).replace(/\r?\n$/, ''));
            return process.stderr.write('stored in vault scope "worker"; deploys now go to your own account through wrangler\n');
          }
        }
      }),
    );
}
