// `vigil webhook register|list|delete|test|deliveries`: the CLI face of
// src/sdk/namespaces/webhook.ts. `register` reads the signing secret from stdin, never
// from argv (argv shows in `ps`).
import type { CAC } from 'cac';
import { sdkContext } from '../workspace/context.ts';
import { webhookNamespace } from '../sdk/namespaces/webhook.ts';
import { UsageError } from './options.ts';
import { printJson, readStdin, runSdkCommand, sdkCommand, unknownAction } from './sdk-command.ts';

const actions = ['register', 'list', 'delete', 'test', 'deliveries'];

export function registerWebhookCommands(cli: CAC): void {
  sdkCommand(
    cli,
    'webhook <action> [...args]',
    'Webhooks on the cloud API (api_url of vigil.yml, key from the vault scope "api"): "register EVENT URL" (secret from stdin), "list", "delete ID", "test ID", "deliveries ID"',
  )
    .option('--json', 'Print the result as JSON')
    .example((name) => `  $ printf %s "$SECRET" | ${name} webhook register cir.capture https://example.com/hooks/vigil`)
    .action((action: string, args: string[], options: { json?: boolean }) =>
      runSdkCommand(async () => {
        if (!actions.includes(action)) unknownAction('webhook', action, actions);
        const webhook = webhookNamespace(sdkContext({ workspace: process.cwd() }));
        const arg = (i: number, name: string): string => {
          const value = args[i];
          if (value === undefined) throw new UsageError(`webhook ${action}: needs ${name}`);
          return String(value);
        };
        if (action === 'register') {
          const [event, url] = [arg(0, 'EVENT and URL'), arg(1, 'a URL')];
          if (process.stdin.isTTY) process.stderr.write('signing secret, at least 16 characters (end with Ctrl-D):\n');
          const secret = (await readStdin()).replace(/\r?\n$/, '');
          const made = await webhook.register(event, url, secret);
          if (options.json) printJson(made);
          else process.stdout.write(`${made.id}\t${made.event}\t${made.url}\n`);
        } else if (action === 'list') {
          const list = await webhook.list();
          if (options.json) printJson(list);
          else for (const w of list) process.stdout.write(`${w.id}\t${w.event}\t${w.url}\tactive=${w.active}\t${w.created_at}\n`);
        } else if (action === 'delete') {
          const result = await webhook.delete(arg(0, 'the registration id'));
          if (options.json) printJson(result);
          else process.stdout.write(`deleted ${args[0]}\n`);
        } else if (action === 'test') {
          const result = await webhook.test(arg(0, 'the registration id'));
          if (options.json) printJson(result);
          else process.stdout.write(result.delivered ? `delivered (${result.response_code})\n` : `not delivered: ${result.error ?? result.response_code}\n`);
          if (!result.delivered) process.exitCode = 1;
        } else {
          printJson(await webhook.deliveries(arg(0, 'the registration id')));
        }
      }),
    );
}
