// `vigil webhook register|list|delete|test|deliveries`: the CLI face of
// src/sdk/namespaces/webhook.ts. `register` reads the signing secret from stdin, never
// from argv (argv shows in `ps`).
import type { CAC } from 'cac';
import { applyBaseFlag } from './base-flag.ts';
import { ExitCode } from '../errors/exit-codes.ts';
import { sdkContext } from '../workspace/context.ts';
import { type DeliveryView, webhookNamespace } from '../sdk/namespaces/webhook.ts';
import { listFlag, stringFlag, UsageError } from './options.ts';
import { defineCommand } from './command.ts';
import { printJson, readStdin, runSdkCommand, unknownAction } from './sdk-command.ts';

/** One delivery as a line of tab-separated fields, like `webhook list`'s registrations. */
function deliveryLine(d: DeliveryView): string {
  const outcome = d.status === 'pending' ? `next ${d.next_attempt_at ?? '-'}` : d.status === 'failed' ? (d.error ?? `answered ${d.response_code}`) : `${d.response_code}`;
  return [d.id, d.event, d.status, `attempts=${d.attempts}`, outcome, d.created_at].join('\t');
}

const actions = ['register', 'list', 'delete', 'test', 'deliveries'];

export function registerWebhookCommands(cli: CAC): void {
  defineCommand(
    cli,
    'webhook <action> [...args]',
    'Webhooks on the cloud API (api_url of vigil.yml, key from the vault scope "api"): "register EVENT URL" (secret from stdin; EVENT monitor.observation with --monitor follows a monitor), "list", "delete ID", "test ID", "deliveries ID"',
  )
    .option('--base <url>', 'Server whose cloud API to use (default: VIGIL_API_URL, then api_url of vigil.yml, then VIGIL_BASE, then server.base)', { type: [String] })
    .option('--monitor <id>', 'register monitor.observation: the monitor to follow', { type: [String] })
    .option('--types <types>', 'register monitor.observation: observation types delivered, comma-separated (a trailing * matches a prefix; default all)', { type: [String] })
    .option('--monitor-token <token>', "register monitor.observation: the monitor's owner or subscribe token when it is not public (or VIGIL_TOKEN)", { type: [String] })
    .option('--json', 'Print the result as JSON')
    .example('printf %s "$SECRET" | vigil webhook register cir.capture https://example.com/hooks/vigil')
    .example('printf %s "$SECRET" | vigil webhook register monitor.observation https://example.com/hooks/builds --monitor builds --types "ci.build.*"')
    .action((action: string, args: string[], options: { json?: boolean; base?: unknown; monitor?: unknown; types?: unknown; monitorToken?: unknown }) =>
      runSdkCommand(async () => {
        if (!actions.includes(action)) unknownAction('webhook', action, actions);
        applyBaseFlag(options.base, { cloud: true });
        const webhook = webhookNamespace(sdkContext({ workspace: process.cwd() }));
        const arg = (i: number, name: string): string => {
          const value = args[i];
          if (value === undefined) throw new UsageError(`webhook ${action}: needs ${name}`);
          return String(value);
        };
        if (action === 'register') {
          const [event, url] = [arg(0, 'EVENT and URL'), arg(1, 'a URL')];
          if (process.stdin.isTTY) process.stderr.write('signing secret, at least 16 characters (end with Ctrl-D):\n');
          const secret = (await readStdin('secret', 1024)).replace(/\r?\n$/, '');
          const monitor = stringFlag('--monitor', options.monitor);
          const types = listFlag(stringFlag('--types', options.types));
          const token = stringFlag('--monitor-token', options.monitorToken) ?? (monitor ? process.env.VIGIL_TOKEN : undefined);
          const follow = monitor === undefined ? undefined : { monitor, ...(types.length > 0 && { types }), ...(token && { token }) };
          const made = await webhook.register(event, url, secret, follow);
          if (options.json) printJson(made);
          else process.stdout.write(`${[made.id, made.event, made.url, ...(made.monitor ? [`monitor=${made.monitor}`] : []), ...(made.types ? [`types=${made.types.join(',')}`] : [])].join('\t')}\n`);
        } else if (action === 'list') {
          const list = await webhook.list();
          if (options.json) printJson(list);
          else
            for (const w of list) {
              const follows = w.monitor ? [`monitor=${w.monitor}`, ...(w.types ? [`types=${w.types.join(',')}`] : [])] : [];
              process.stdout.write(`${[w.id, w.event, w.url, `active=${w.active}`, w.created_at, ...follows].join('\t')}\n`);
            }
        } else if (action === 'delete') {
          const result = await webhook.delete(arg(0, 'the registration id'));
          if (options.json) printJson(result);
          else process.stdout.write(`deleted ${args[0]}\n`);
        } else if (action === 'test') {
          const result = await webhook.test(arg(0, 'the registration id'));
          if (options.json) printJson(result);
          else process.stdout.write(result.delivered ? `delivered (${result.response_code})\n` : `not delivered: ${result.error ?? result.response_code}\n`);
          if (!result.delivered) process.exitCode = ExitCode.failed;
        } else {
          const deliveries = await webhook.deliveries(arg(0, 'the registration id'));
          if (options.json) printJson(deliveries);
          else if (deliveries.length === 0) process.stdout.write(`no deliveries for ${args[0]} (finished ones are kept 7 days)\n`);
          else for (const d of deliveries) process.stdout.write(`${deliveryLine(d)}\n`);
        }
      }),
    );
}
