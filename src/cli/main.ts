// Entry point of the `vigil` command line. Each command group lives in its
// own file and registers itself here.
import { cac } from 'cac';
import { packageVersion } from '../version.ts';
import { registerPublishCommand } from './publish.ts';
import { registerServeCommands } from './serve.ts';
import { registerConformCommands } from './conform-commands.ts';
import { registerWatchCommand } from './watch.ts';
import { registerMcpCommands } from './mcp-commands.ts';
import { registerRecipeCommands } from './recipe-commands.ts';
import { registerVaultCommands } from './vault-commands.ts';
import { registerLedgerCommands } from './ledger-commands.ts';
import { registerCirCommands } from './cir-commands.ts';
import { registerApiKeyCommands } from './api-key-commands.ts';
import { registerWebhookCommands } from './webhook-commands.ts';
import { registerWorkerCommands } from './worker-commands.ts';
import { forwardProductEvents } from '../cloud/event-forwarder.ts';

forwardProductEvents();

const cli = cac('vigil');
registerServeCommands(cli);
registerConformCommands(cli);
registerWatchCommand(cli);
registerPublishCommand(cli);
registerMcpCommands(cli);
registerRecipeCommands(cli);
registerVaultCommands(cli);
registerLedgerCommands(cli);
registerCirCommands(cli);
registerApiKeyCommands(cli);
registerWebhookCommands(cli);
registerWorkerCommands(cli);

cli.help();
cli.version(packageVersion);

try {
  cli.parse(process.argv, { run: false });
  if (!cli.matchedCommand) {
    if (cli.args.length > 0) {
      process.stderr.write(`vigil: unknown command "${cli.args[0]}". Run "vigil --help" for the list.\n`);
      process.exit(2);
    }
    if (!cli.options.help && !cli.options.version) cli.outputHelp();
  } else {
    await cli.runMatchedCommand();
  }
} catch (error) {
  process.stderr.write(`vigil: ${(error as Error).message}\n`);
  process.exit(2);
}
