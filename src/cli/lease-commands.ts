// `vigil lease check`: whether the lease a sentinel's reaction runs under is
// still held by that grant (holder and fence), so a script can guard a side
// effect with it: `vigil lease check && git push`. It reads the VIGIL_LEASE_*
// variables the sentinel gives the reaction's environment; flags override them.
import type { CAC } from 'cac';
import { ExitCode } from '../errors/exit-codes.ts';
import { checkLease, LEASE_ENV, type LeaseRef } from '../server-client/lease-check.ts';
import { defineCommand, exitWith, fail } from './command.ts';
import { UsageError } from './options.ts';

interface CheckFlags {
  base?: string;
  monitor?: string;
  subject?: string;
  holder?: string;
  fence?: string;
  subscription?: string;
  token?: string;
  quiet?: boolean;
}

function leaseRef(flags: CheckFlags, env: NodeJS.ProcessEnv): LeaseRef {
  const pick = (flag: keyof typeof LEASE_ENV & keyof CheckFlags) => {
    const value = flags[flag] ?? env[LEASE_ENV[flag]];
    if (value === undefined || String(value).trim() === '')
      throw new UsageError(`lease check: --${flag} is not given and ${LEASE_ENV[flag]} is not set (a sentinel's reaction has it in its environment)`);
    return String(value);
  };
  const fence = Number(pick('fence'));
  if (!Number.isInteger(fence) || fence < 1) throw new UsageError(`lease check: --fence (or ${LEASE_ENV.fence}) must be a whole number from 1, got "${pick('fence')}"`);
  return { base: pick('base'), monitor: pick('monitor'), subject: pick('subject'), holder: pick('holder'), fence, subscription: pick('subscription'), token: pick('token') };
}

export function registerLeaseCommands(cli: CAC): void {
  defineCommand(cli, 'lease <action>', 'Leases of a sentinel\'s reaction: "check" exits 0 while the lease it runs under is still held by its grant (holder and fence), 1 otherwise', {
    details:
      'Reads VIGIL_LEASE_BASE, _MONITOR, _SUBJECT, _HOLDER, _FENCE, _SUBSCRIPTION and _TOKEN (set by a sentinel for its reaction); each flag overrides one. ' +
      'Exit 1 also when the server cannot be reached: the lease cannot be shown to be held.',
  })
    .option('--base <url>', 'the server (default $VIGIL_LEASE_BASE)', { type: [String] })
    .option('--monitor <id>', 'the monitor (default $VIGIL_LEASE_MONITOR)', { type: [String] })
    .option('--subject <subject>', 'the leased subject (default $VIGIL_LEASE_SUBJECT)', { type: [String] })
    .option('--holder <holder>', 'the holder, sub:<id> (default $VIGIL_LEASE_HOLDER)', { type: [String] })
    .option('--fence <n>', 'the grant\'s fencing token (default $VIGIL_LEASE_FENCE)', { type: [String] })
    .option('--subscription <id>', 'a subscription of the monitor to read with (default $VIGIL_LEASE_SUBSCRIPTION)', { type: [String] })
    .option('--token <token>', 'its token (default $VIGIL_LEASE_TOKEN)', { type: [String] })
    .option('--quiet', 'Print nothing; only the exit code says')
    .example('vigil lease check && git push origin HEAD')
    .action(async (action: string, flags: CheckFlags) => {
      try {
        if (action !== 'check') throw new UsageError(`lease: unknown action "${action}"; the one action is "check"`);
        const one = (v: unknown) => (Array.isArray(v) ? v.at(-1) : v) as string | undefined;
        const ref = leaseRef(Object.fromEntries(Object.entries(flags).map(([k, v]) => [k, one(v)])) as CheckFlags, process.env);
        let verdict: { held: boolean; reason: string };
        try {
          verdict = await checkLease(ref);
        } catch (error) {
          verdict = { held: false, reason: `cannot tell whether the lease on "${ref.subject}" is held: ${(error as Error).message}` };
        }
        if (!flags.quiet) (verdict.held ? process.stdout : process.stderr).write(`${verdict.reason}\n`);
        exitWith(verdict.held ? ExitCode.ok : ExitCode.failed);
      } catch (error) {
        fail(error);
      }
    });
}
