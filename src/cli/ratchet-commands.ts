// `vigil ratchet check|baseline`: the face of sdk.ratchet.
import type { CAC } from 'cac';
import { VigilError } from '../errors/vigil-error.ts';
import { defineCommand } from './command.ts';
import { printJson, runSdkCommand, unknownAction } from './sdk-command.ts';

export function registerRatchetCommands(cli: CAC): void {
  defineCommand(cli, 'ratchet <action>', 'Counted metrics that may only go down: "check" fails a rule above its baseline (exit 1), "baseline" records today\'s counts')
    .option('--config <path>', 'Rules file (default .vigil/ratchet.json)')
    .option('--source <dir>', 'Directory whose files are counted (default: the current directory)')
    .option('--json', 'Print the result as JSON')
    .action((action: string, options: { config?: string; source?: string; json?: boolean }) =>
      runSdkCommand(async () => {
        const [{ sdkContext }, { ratchetNamespace }] = await Promise.all([import('../workspace/context.ts'), import('../sdk/namespaces/ratchet.ts')]);
        const ratchet = ratchetNamespace(sdkContext({ workspace: process.cwd() }));
        const opts = { ...(options.config ? { config: String(options.config) } : {}), ...(options.source ? { source: String(options.source) } : {}) };
        if (action === 'baseline') {
          ratchet.baseline(opts);
          if (!options.json) process.stdout.write('baseline recorded in .vigil/ratchet-baseline.json\n');
          return;
        }
        if (action !== 'check') unknownAction('ratchet', action, ['check', 'baseline']);
        const r = ratchet.check(opts);
        if (options.json) printJson(r);
        else for (const [name, n] of Object.entries(r.counts)) process.stdout.write(`${name.padEnd(24)} ${n}\n`);
        if (!r.passed) {
          const lines = r.violations.map((v) => `${v.name}: ${v.count} > baseline ${v.limit} (${v.pattern})`);
          throw new VigilError('INTERNAL', `ratchet: ${r.violations.length} rule(s) went up:\n  ${lines.join('\n  ')}`);
        }
      }),
    );
}
