// `vigil api-key create|list|revoke`: API keys of the cloud API on a running
// `vigil serve`, managed with the server's admin token.
import type { CAC } from 'cac';
import { CloudError, cloudClient } from '../cloud/cloud-client.ts';
import { stringFlag, UsageError } from './options.ts';
import { defaultBase } from './server-client.ts';

interface KeyFlags {
  base?: unknown;
  adminToken?: unknown;
  name?: unknown;
  json?: boolean;
}

function adminClient(flags: KeyFlags) {
  const token = stringFlag('--admin-token', flags.adminToken) ?? process.env.VIGIL_ADMIN_TOKEN;
  if (!token) throw new UsageError('--admin-token <token> is required (or set VIGIL_ADMIN_TOKEN): the token the server printed or was given with --allow-admin.');
  return cloudClient(stringFlag('--base', flags.base) ?? defaultBase, token);
}

async function run(action: () => Promise<void>, json: boolean | undefined): Promise<void> {
  try {
    await action();
  } catch (error) {
    if (!(error instanceof CloudError)) throw error;
    if (json) process.stdout.write(`${JSON.stringify({ code: error.code, error: error.message, ...error.details })}\n`);
    else process.stderr.write(`vigil api-key: ${error.code}: ${error.message}\n`);
    process.exit(error.code === 'UNREACHABLE' ? 3 : 1);
  }
}

export function registerApiKeyCommands(cli: CAC): void {
  const withCommon = (command: ReturnType<CAC['command']>) =>
    command
      .option('--base <url>', 'Server to use', { default: process.env.VIGIL_BASE ?? defaultBase, type: [String] })
      .option('--admin-token <token>', "The server's admin token (or VIGIL_ADMIN_TOKEN)", { type: [String] })
      .option('--json', 'Print the reply as JSON');

  withCommon(cli.command('api-key create', 'Make an API key for the cloud API (/v1); it is shown once'))
    .option('--name <name>', 'A label for the key', { type: [String] })
    .example('vigil api-key create --name laptop --admin-token vga_...')
    .action((flags: KeyFlags) =>
      run(async () => {
        const made = await adminClient(flags).request<{ key: string; id: string; name: string }>('POST', '/api-keys', { name: stringFlag('--name', flags.name) ?? 'default' });
        if (flags.json) process.stdout.write(`${JSON.stringify(made)}\n`);
        else {
          process.stdout.write(`${made.key}\n`);
          process.stderr.write(`vigil: API key ${made.id} (${made.name}); this is the only time it is shown. Store it with: vigil vault set api_key --scope api\n`);
        }
      }, flags.json),
    );

  withCommon(cli.command('api-key list', 'List the API keys (ids and names, never the keys)')).action((flags: KeyFlags) =>
    run(async () => {
      const { keys } = await adminClient(flags).request<{ keys: Array<{ id: string; name: string; created_at: string; revoked: boolean }> }>('GET', '/api-keys');
      if (flags.json) process.stdout.write(`${JSON.stringify(keys)}\n`);
      else for (const k of keys) process.stdout.write(`${k.id}\t${k.name}\t${k.created_at}\t${k.revoked ? 'revoked' : 'active'}\n`);
    }, flags.json),
  );

  withCommon(cli.command('api-key revoke <id>', 'Revoke an API key; requests with it are refused from then on')).action((id: string, flags: KeyFlags) =>
    run(async () => {
      const reply = await adminClient(flags).request('DELETE', `/api-keys/${encodeURIComponent(id)}`);
      process.stdout.write(flags.json ? `${JSON.stringify(reply)}\n` : `revoked ${id}\n`);
    }, flags.json),
  );
}
