// The `vigil` program: every command group, each in its own file, registered
// on one cac instance with the house style of help (command.ts). main.ts
// parses argv with it; tests read its help in-process.
import { type CAC, cac } from 'cac';
import { packageVersion } from '../version.ts';
import { helpStyle } from './command.ts';
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
import { registerLeaseCommands } from './lease-commands.ts';

export function vigilProgram(): CAC {
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
  registerLeaseCommands(cli);
  cli.help(helpStyle);
  cli.version(packageVersion);
  return cli;
}
