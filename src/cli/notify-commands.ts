// `vigil notify TITLE MESSAGE` and `vigil health`: faces of sdk.notify and sdk.health.
import type { CAC } from 'cac';
import { applyBaseFlag, baseHelp } from './base-flag.ts';
import { sdkContext } from '../workspace/context.ts';
import { healthNamespace } from '../sdk/namespaces/health.ts';
import { deliver, publishNotice } from '../notify/notify.ts';
import { VigilError } from '../errors/vigil-error.ts';
import { defineCommand } from './command.ts';
import { printJson, runSdkCommand } from './sdk-command.ts';

export function registerNotifyCommands(cli: CAC): void {
  defineCommand(cli, 'notify <title> <message>', 'Show a desktop notification (or a line on stderr where there is no desktop); never fails')
    .option('--base <url>', `${baseHelp}; the notice is published there when vigil.yml names a server`, { type: [String] })
    .option('--json', 'Print where it was delivered as JSON')
    .action((title: string, message: string, options: { json?: boolean; base?: unknown }) =>
      runSdkCommand(async () => {
        applyBaseFlag(options.base);
        const ctx = sdkContext({ workspace: process.cwd() });
        const r = deliver(ctx, String(title), String(message));
        await publishNotice(ctx, String(title), String(message), r.delivered);
        if (options.json) printJson(r);
      }),
    );

  defineCommand(cli, 'health', 'Check the store, CIR, vault, daemon, server and agent backends of this project (exit 1 when a required part is broken)')
    .option('--base <url>', baseHelp, { type: [String] })
    .option('--json', 'Print the report as JSON')
    .action((options: { json?: boolean; base?: unknown }) =>
      runSdkCommand(async () => {
        applyBaseFlag(options.base);
        const report = await healthNamespace(sdkContext({ workspace: process.cwd() })).check();
        if (options.json) printJson(report);
        else {
          const { backends, ...parts } = report.components;
          // FAIL only where it fails the command: the daemon and the server are reported, not required.
          const optional = new Set(['daemon', 'server']);
          for (const [name, c] of Object.entries(parts)) process.stdout.write(`${c.ok ? 'ok  ' : optional.has(name) ? 'warn' : 'FAIL'}  ${name.padEnd(8)} ${c.detail}\n`);
          for (const [name, c] of Object.entries(backends)) process.stdout.write(`${c.ok ? 'ok  ' : '--  '}  ${`backend ${name}`.padEnd(8)} ${c.detail}\n`);
        }
        if (!report.ok) throw new VigilError('INTERNAL', 'health: a required component is broken (store, cir or vault)');
      }),
    );
}
