// `vigil plugin list` and `vigil dispatch list|send|status|run`: faces of
// sdk.plugin and sdk.dispatch.
import type { CAC } from 'cac';
import { ExitCode } from '../errors/exit-codes.ts';
import { invalid } from '../errors/vigil-error.ts';
import { UsageError } from './options.ts';
import { defineCommand } from './command.ts';
import { printJson, runSdkCommand, unknownAction } from './sdk-command.ts';
import { terminalText } from '../text/terminal.ts';

export function registerPluginCommands(cli: CAC): void {
  defineCommand(cli, 'plugin <action>', 'Plugins in .vigil/plugins and ~/.vigil/plugins: "list"')
    .option('--json', 'Print PluginInfo[] as JSON')
    .action((action: string, options: { json?: boolean }) =>
      runSdkCommand(async () => {
        if (action !== 'list') unknownAction('plugin', action, ['list']);
        // Loaded on demand, as every heavy part of a command: `vigil --version` starts without them.
        const [{ sdkContext }, { loadPlugins }, { pluginNamespace }] = await Promise.all([
          import('../workspace/context.ts'),
          import('../plugins/plugins.ts'),
          import('../sdk/namespaces/plugin.ts'),
        ]);
        const ctx = sdkContext({ workspace: process.cwd() });
        const list = pluginNamespace(ctx).list();
        for (const p of loadPlugins(ctx).problems) process.stderr.write(`invalid plugin ${p}\n`);
        if (options.json) return printJson(list);
        if (list.length === 0) process.stdout.write('no plugins\n');
        for (const p of list) process.stdout.write(`${p.name}${p.version ? `@${p.version}` : ''}  hooks: ${p.hooks.join(', ') || '-'}  tools: ${p.tools.join(', ') || '-'}\n`);
      }),
    );

  defineCommand(cli, 'dispatch <action> [arg]', 'Tools of plugins and MCP servers as queued jobs: "list", "send TOOL" (--params, --wait), "status ID", "run" (runs queued jobs)')
    .option('--params <json>', 'send: the tool parameters as a JSON object')
    .option('--wait', 'send: run the job now and print its final status')
    .option('--json', 'Print the result as JSON')
    .action((action: string, arg: string | undefined, options: { params?: string; wait?: boolean; json?: boolean }) =>
      runSdkCommand(async () => {
        const [{ sdkContext }, { dispatchNamespace }, { runDispatchJob, runQueuedDispatchJobs }] = await Promise.all([
          import('../workspace/context.ts'),
          import('../sdk/namespaces/dispatch.ts'),
          import('../dispatch/tools.ts'),
        ]);
        const ctx = sdkContext({ workspace: process.cwd() });
        const dispatch = dispatchNamespace(ctx);
        const need = (what: string): string => {
          if (arg === undefined) throw new UsageError(`dispatch ${action}: needs ${what}`);
          return String(arg);
        };
        if (action === 'list') {
          const tools = await dispatch.list();
          if (options.json) return printJson(tools);
          if (tools.length === 0) process.stdout.write('no tools\n');
          for (const t of tools) process.stdout.write(`${t.source.padEnd(24)} ${t.name}${t.description ? `  ${t.description}` : ''}\n`);
        } else if (action === 'send') {
          let params: Record<string, unknown> = {};
          if (options.params !== undefined) {
            try {
              params = JSON.parse(String(options.params));
            } catch (error) {
              throw invalid('--params', `is not JSON: ${(error as Error).message}`);
            }
          }
          const sent = await dispatch.send(need('TOOL'), params);
          const out = options.wait ? await runDispatchJob(ctx, sent.id) : sent;
          if (options.json) printJson(out);
          else process.stdout.write(`${out.id} ${out.status}\n`);
          if (options.wait && out.status === 'failed') {
            if (!options.json && 'error' in out) process.stderr.write(terminalText(`vigil dispatch: ${out.error}\n`));
            process.exitCode = ExitCode.failed;
          }
        } else if (action === 'status') {
          const job = dispatch.status(need('ID'));
          if (options.json) printJson(job);
          else process.stdout.write(terminalText(`${job.id} ${job.status} ${job.source}/${job.tool} attempts ${job.attempts}${job.error ? `  error: ${job.error}` : ''}\n`));
        } else if (action === 'run') {
          const n = await runQueuedDispatchJobs(ctx);
          if (options.json) printJson({ ran: n });
          else process.stdout.write(`ran ${n} queued job(s)\n`);
        } else unknownAction('dispatch', action, ['list', 'send', 'status', 'run']);
      }),
    );
}
