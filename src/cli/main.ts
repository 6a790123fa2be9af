// Entry point of the `vigil` command line. Each command group lives in its
// own file and registers itself here.
import { cac } from 'cac';
import { packageVersion } from '../version.ts';
import { closestFlag } from './options.ts';
import { registerInitCommand } from './init-command.ts';
import { registerPublishCommand } from './publish.ts';
import { registerServeCommands } from './serve.ts';
import { registerConformCommands } from './conform-commands.ts';
import { registerWatchCommand } from './watch.ts';
import { registerMcpCommands } from './mcp-commands.ts';
import { registerRecipeCommands } from './recipe-commands.ts';
import { registerDaemonCommands } from './daemon-commands.ts';
import { registerTemporalCommands } from './temporal-commands.ts';
import { registerVaultCommands } from './vault-commands.ts';
import { registerLedgerCommands } from './ledger-commands.ts';
import { registerCirCommands } from './cir-commands.ts';
import { registerScriptCommands } from './script-commands.ts';
import { registerNotifyCommands } from './notify-commands.ts';
import { registerRatchetCommands } from './ratchet-commands.ts';
import { registerPluginCommands } from './plugin-commands.ts';
import { registerApiKeyCommands } from './api-key-commands.ts';
import { registerWebhookCommands } from './webhook-commands.ts';
import { registerWorkerCommands } from './worker-commands.ts';
import { registerBenchCommands } from './bench-commands.ts';
import { forwardProductEvents } from '../cloud/event-forwarder.ts';

forwardProductEvents();

// A reader that goes away (`vigil sequence … | head`) is not a crash: output
// stops, the command goes on (a run keeps recording its steps). Commands that
// only print (watch) end themselves when their reader goes.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  // EIO: the terminal itself is gone (SIGHUP).
  if (error.code !== 'EPIPE' && error.code !== 'EIO' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
});

const cli = cac('vigil');
registerServeCommands(cli);
registerInitCommand(cli);
registerConformCommands(cli);
registerWatchCommand(cli);
registerPublishCommand(cli);
registerMcpCommands(cli);
registerRecipeCommands(cli);
registerDaemonCommands(cli);
registerTemporalCommands(cli);
registerVaultCommands(cli);
registerLedgerCommands(cli);
registerCirCommands(cli);
registerScriptCommands(cli);
registerNotifyCommands(cli);
registerRatchetCommands(cli);
registerPluginCommands(cli);
registerApiKeyCommands(cli);
registerWebhookCommands(cli);
registerWorkerCommands(cli);
registerBenchCommands(cli);

cli.help();
cli.version(packageVersion);

/**
 * `--port -1` reaches the flag's own check ("takes a whole number from 0 to
 * 65535"), not the parser's "Unknown option `-1`": a negative number after a
 * flag is that flag's value.
 */
function negativeValuesAttached(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (i >= 2 && /^--[a-z][\w-]*$/.test(arg) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** "; did you mean --var?" after cac's "Unknown option `--vars`", from the matched command's flags and the global ones. */
const kebab = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

function flagHint(message: string): string {
  const typed = /^Unknown option `(-[^`]+)`/.exec(message)?.[1];
  if (!typed) return '';
  const known = [...(cli.matchedCommand?.options ?? []), ...cli.globalCommand.options].flatMap((o) => o.names.map(kebab));
  const flag = closestFlag(typed, known.filter((n) => n.length > 1));
  return flag ? `; did you mean ${flag}?` : '';
}

try {
  cli.parse(negativeValuesAttached(process.argv), { run: false });
  // cac has printed the help or the version and forgotten the command.
  if (cli.options.help || cli.options.version) process.exit(0);
  if (!cli.matchedCommand) {
    if (cli.args.length > 0) {
      process.stderr.write(`vigil: unknown command "${cli.args[0]}". Run "vigil --help" for the list.\n`);
      process.exit(2);
    }
    cli.outputHelp();
  } else {
    await cli.runMatchedCommand();
  }
} catch (error) {
  // cac names an unknown `--catch-up` by its camel-cased key: name it as typed.
  const message = (error as Error).message.replace(/^(Unknown option `--)([^`]+)`/, (_m, head: string, name: string) => `${head}${kebab(name)}\``);
  process.stderr.write(`vigil: ${message}${flagHint(message)}\n`);
  process.exit(2);
}
