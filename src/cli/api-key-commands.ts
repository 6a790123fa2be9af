// `vigil api-key create|list|revoke`: API keys of the cloud API on a running
// `vigil serve`, managed with the server's admin token; and what every key
// holds there (`workers`, `webhooks`, `delete-worker`, `delete-webhook`).
import type { CAC } from 'cac';
import { CloudError, cloudClient } from '../cloud/cloud-client.ts';
import { listFlag, stringFlag, UsageError } from './options.ts';
import { baseHelp, resolveBase } from './base-flag.ts';
import { exitCodeOf } from '../errors/exit-codes.ts';
import { defineCommand } from './command.ts';
import { unknownAction } from './sdk-command.ts';

interface KeyFlags {
  base?: unknown;
  adminToken?: unknown;
  name?: unknown;
  monitors?: unknown;
  json?: boolean;
}

interface KeyInfo {
  id: string;
  name: string;
  created_at: string;
  revoked: boolean;
  monitors: string[] | '*';
}

const actions = ['create', 'list', 'revoke', 'workers', 'webhooks', 'delete-worker', 'delete-webhook'];

async function adminClient(flags: KeyFlags) {
  const token = stringFlag('--admin-token', flags.adminToken) ?? process.env.VIGIL_ADMIN_TOKEN;
  if (!token) throw new UsageError('--admin-token <token> is required (or set VIGIL_ADMIN_TOKEN): the token the server printed or was given with --allow-admin.');
  return cloudClient(await resolveBase(flags.base), token);
}

/** "*" alone asks for every monitor; anything else is a list of ids. */
function monitorsFlag(value: unknown): string[] | '*' {
  const ids = listFlag(value);
  if (ids.includes('*')) {
    if (ids.length > 1) throw new UsageError('--monitors: "*" (every monitor) stands alone; give either "*" or a list of monitor ids.');
    return '*';
  }
  return ids;
}

const scopeText = (monitors: string[] | '*') =>
  monitors === '*' ? 'every monitor' : monitors.length === 0 ? 'no monitor' : `monitors ${monitors.join(', ')}`;

export function registerApiKeyCommands(cli: CAC): void {
  defineCommand(
    cli,
    'api-key <action> [id]',
    'API keys of the cloud API (/v1): "create" (the key is shown once), "list" (never the keys), "revoke ID" (its workers are deleted, its webhooks disabled); every key\'s "workers" and "webhooks", "delete-worker NAME", "delete-webhook ID"',
  )
    .option('--base <url>', baseHelp, { type: [String] })
    .option('--admin-token <token>', "The server's admin token (or VIGIL_ADMIN_TOKEN)", { type: [String] })
    .option('--name <name>', 'create: a label for the key', { type: [String] })
    .option('--monitors <ids>', 'create: the monitors the key may trigger (POST /v1/triggers/<id>), comma-separated or repeated; "*" for every monitor. Default: none', {
      type: [String],
    })
    .option('--json', 'Print the reply as JSON')
    .example('vigil api-key create --name laptop --admin-token vga_... | vigil vault set api_key --scope api')
    .example('vigil api-key create --name ci --monitors deploys,builds --admin-token vga_...')
    .action(async (action: string, id: string | undefined, flags: KeyFlags) => {
      if (!actions.includes(action)) unknownAction('api-key', action, actions);
      const client = await adminClient(flags);
      try {
        if (action === 'create') {
          const made = await client.request<KeyInfo & { key: string }>('POST', '/api-keys', {
            name: stringFlag('--name', flags.name) ?? 'default',
            monitors: monitorsFlag(flags.monitors),
          });
          if (flags.json) process.stdout.write(`${JSON.stringify(made)}\n`);
          else {
            process.stdout.write(`${made.key}\n`);
            process.stderr.write(
              `vigil: API key ${made.id} (${made.name}) may trigger ${scopeText(made.monitors)}; this is the only time it is shown. Store it with: vigil vault set api_key --scope api\n`,
            );
          }
        } else if (action === 'list') {
          const { keys } = await client.request<{ keys: KeyInfo[] }>('GET', '/api-keys');
          if (flags.json) process.stdout.write(`${JSON.stringify(keys)}\n`);
          else {
            for (const k of keys) process.stdout.write(`${k.id}\t${k.name}\t${k.created_at}\t${k.revoked ? 'revoked' : 'active'}\t${scopeText(k.monitors)}\n`);
          }
        } else if (action === 'revoke') {
          if (!id) throw new UsageError('api-key revoke: needs the key id (see "vigil api-key list")');
          const reply = await client.request<{ workers_deleted: string[]; webhooks_disabled: number }>('DELETE', `/api-keys/${encodeURIComponent(id)}`);
          const workers = reply.workers_deleted.length === 0 ? 'no worker' : `workers deleted: ${reply.workers_deleted.join(', ')}`;
          process.stdout.write(flags.json ? `${JSON.stringify(reply)}\n` : `revoked ${id} (${workers}; webhook registrations disabled: ${reply.webhooks_disabled})\n`);
        } else if (action === 'workers') {
          const { workers } = await client.request<{ workers: Array<{ name: string; key_id: string; modified_on: string; running: boolean }> }>('GET', '/admin/workers');
          if (flags.json) process.stdout.write(`${JSON.stringify(workers)}\n`);
          else for (const w of workers) process.stdout.write(`${w.name}\t${w.key_id}\t${w.modified_on}\t${w.running ? 'running' : 'stopped'}\n`);
        } else if (action === 'webhooks') {
          const { webhooks } = await client.request<{ webhooks: Array<{ id: string; key_id: string; event: string; url: string; active: string }> }>('GET', '/admin/webhooks');
          if (flags.json) process.stdout.write(`${JSON.stringify(webhooks)}\n`);
          else for (const w of webhooks) process.stdout.write(`${w.id}\t${w.key_id}\t${w.event}\t${w.url}\t${w.active === 'true' ? 'active' : 'disabled'}\n`);
        } else {
          const what = action === 'delete-worker' ? 'workers' : 'webhooks';
          if (!id) throw new UsageError(`api-key ${action}: needs the ${action === 'delete-worker' ? 'worker name' : 'registration id'} (see "vigil api-key ${what}")`);
          const reply = await client.request('DELETE', `/admin/${what}/${encodeURIComponent(id)}`);
          process.stdout.write(flags.json ? `${JSON.stringify(reply)}\n` : `deleted ${id}\n`);
        }
      } catch (error) {
        if (!(error instanceof CloudError)) throw error;
        if (flags.json) process.stdout.write(`${JSON.stringify({ code: error.code, error: error.message, ...error.details })}\n`);
        else process.stderr.write(`vigil api-key: ${error.code}: ${error.message}\n`);
        process.exit(exitCodeOf(error));
      }
    });
}
