// `vigil ledger verify|show`: checks the hash chain of .vigil/ledger.jsonl
// and names the first broken line (exit 1), or shows the latest entries.
import type { CAC } from 'cac';
import { sdkContext } from '../workspace/context.ts';
import { VigilError } from '../errors/vigil-error.ts';
import { ledgerFile } from '../ledger/ledger.ts';
import { ledgerNamespace } from '../sdk/namespaces/ledger.ts';
import { wholeNumberFlag } from './options.ts';
import { defineCommand } from './command.ts';
import { printJson, runSdkCommand, unknownAction } from './sdk-command.ts';

export function registerLedgerCommands(cli: CAC): void {
  defineCommand(cli, 'ledger <action>', 'The hash-chained ledger of this project: "verify" checks it, "show" prints the latest entries')
    .option('--json', 'Print the result as JSON')
    .option('--limit <n>', 'With show: how many entries (default 20)')
    .action((action: string, options: { json?: boolean; limit?: unknown }) =>
      runSdkCommand(() => {
        const ctx = sdkContext({ workspace: process.cwd() });
        const ledger = ledgerNamespace(ctx);
        const file = ledgerFile(ctx.projectRoot);
        if (action === 'verify') {
          const verdict = ledger.verify();
          if (options.json) printJson(verdict);
          if (!verdict.valid) {
            throw new VigilError('LEDGER_BROKEN', `ledger ${file}: line ${verdict.broken!.line} breaks the chain: ${verdict.broken!.reason}`, verdict.broken);
          }
          if (!options.json) process.stdout.write(`ledger ${file}: valid, ${verdict.entries} entries\n`);
        } else if (action === 'show') {
          const limit = options.limit === undefined ? 20 : wholeNumberFlag('--limit', options.limit, 1, 10_000);
          const entries = ledger.entries(limit);
          if (options.json) printJson(entries);
          else for (const e of entries) process.stdout.write(`${e.seq}  ${e.at}  ${e.kind}  ${JSON.stringify(e.data)}\n`);
        } else unknownAction('ledger', action, ['verify', 'show']);
      }),
    );
}
