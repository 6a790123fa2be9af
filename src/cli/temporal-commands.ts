// `vigil temporal list|status|enable|disable|fire <name>`: the CLI face of
// src/triggers/temporal-api.ts (the SDK's `temporal` namespace calls the same
// code). `fire` prints the target's output; it exits 1 when the firing
// failed and 124 when it passed the 600000 ms limit (a TemporalTimeoutError).
import type { CAC } from 'cac';
import { applyBaseFlag, baseHelp } from './base-flag.ts';
import { RecipeInputError } from '../recipes/errors.ts';
import { abortOnStopSignals, ExitCode, signalExit } from '../errors/exit-codes.ts';
import { defineCommand, exitWith, fail } from './command.ts';

const ACTIONS = ['list', 'status', 'enable', 'disable', 'fire'] as const;

export function registerTemporalCommands(cli: CAC): void {
  defineCommand(cli, 'temporal <action> [name]', 'Scheduled recipes: list, status <name>, enable <name>, disable <name>, fire <name>', {
    details: 'list | status <name> | enable <name> | disable <name> | fire <name> (runs the target now and prints its output)',
  })
    .option('--base <url>', `${baseHelp}: where a firing is published`, { type: [String] })
    .option('--json', 'Print TemporalEntry JSON (list, status) or {run_id, status, output} (fire)')
    .example('vigil temporal fire nightly-report')
    .action(async (action: string, name: string | undefined, options: { json?: boolean; base?: unknown }) => {
      applyBaseFlag(options.base);
      const { TemporalApi } = await import('../triggers/temporal-api.ts');
      try {
        if (!(ACTIONS as readonly string[]).includes(action))
          throw new RecipeInputError(`temporal: unknown action "${action}"; actions: ${ACTIONS.join(', ')}`);
        const api = new TemporalApi();
        if (action === 'list') {
          const entries = api.list();
          if (options.json) return void process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
          if (entries.length === 0) return void process.stdout.write('no temporal recipes in .vigil/recipes or ~/.vigil/recipes\n');
          const rows = [
            ['NAME', 'SCHEDULE', 'STATE', 'NEXT RUN', 'LAST RUN', 'FAILURES'],
            ...entries.map((e) => [
              e.name,
              e.schedule,
              e.circuit_broken ? 'circuit-broken' : e.enabled ? 'enabled' : 'disabled',
              e.next_run ?? '-',
              e.last_run ?? '-',
              String(e.consecutive_failures),
            ]),
          ];
          const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
          for (const row of rows) process.stdout.write(`${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')}\n`);
          return;
        }
        if (!name) throw new RecipeInputError(`temporal ${action} needs a recipe name (see "vigil temporal list")`);
        if (action === 'status') {
          const s = api.status(name);
          if (options.json) return void process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
          for (const [k, v] of Object.entries(s)) process.stdout.write(`${k.padEnd(22)} ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}\n`);
          return;
        }
        if (action === 'enable' || action === 'disable') {
          api[action](name);
          return void process.stdout.write(`temporal ${name} ${action}d\n`);
        }
        // Ctrl-C or SIGTERM stops the target as its ttl would (SIGTERM to its group), then exits 130 or 143.
        const stop = new AbortController();
        const stopListening = abortOnStopSignals(stop);
        const result = await api.fire(name, { log: (l) => process.stderr.write(`${l}\n`), stop: stop.signal }).finally(stopListening);
        if (stop.signal.aborted) {
          process.stderr.write(`vigil: temporal fire ${name}: ${result.reason ?? 'stopped'} (run ${result.runId})\n`);
          exitWith(signalExit(String(stop.signal.reason)));
        }
        if (options.json) process.stdout.write(`${JSON.stringify({ run_id: result.runId, status: result.status, output: result.output, reason: result.reason ?? null })}\n`);
        else process.stdout.write(result.output);
        exitWith(result.status === 'succeeded' ? ExitCode.ok : ExitCode.failed);
      } catch (error) {
        fail(error);
      }
    });
}
