// `vigil conform`: the black-box conformance suite against a base URL, or
// against a server this process starts (--self).
import type { CAC } from 'cac';
import type { runChecks } from '../conform/runner.ts';
import { vendor as ownVendor } from '../protocol/vocabulary.ts';
import { ExitCode } from '../errors/exit-codes.ts';
import { fetchWithin } from '../net/fetch-within.ts';
import { defineCommand, exitWith } from './command.ts';
import { listFlag, stringFlag, UsageError } from './options.ts';

interface ConformFlags {
  base?: unknown;
  self?: unknown;
  json?: unknown;
  adminToken?: unknown;
  only?: unknown;
  vendor?: unknown;
  specOnly?: unknown;
}


/** A vendor segment as the base protocol writes it: reverse-DNS labels, e.g. `ai.vigil`. */
const vendorSegment = /^[a-z0-9]+(\.[a-z0-9-]+)+$/;
/** A bare vendor name, e.g. `mentu`: the base protocol's segment for it is `ai.<name>`. */
const bareVendor = /^[a-z0-9][a-z0-9-]*$/;

/** The vendor segment --vendor names: as given (`ai.mentu`), or `ai.<name>` for a bare name (`mentu`). */
export function vendorOf(value: string): string {
  if (vendorSegment.test(value)) return value;
  if (bareVendor.test(value)) return `ai.${value}`;
  throw new UsageError(`--vendor takes a vendor segment such as ${ownVendor}, or a bare vendor name such as mentu (read as ai.mentu); lower-case letters, digits and dashes, labels joined by dots; got "${value}".`);
}

export function registerConformCommands(cli: CAC): void {
  defineCommand(cli, 'conform', 'Run the black-box conformance suite against a monitor server (exit 1 when a check fails); the cf-* monitors it creates are retired at the end')
    .option('--base <url>', 'Server to test: its origin (http://host:port) or its /mp/v0 root', { type: [String] })
    .option('--self', 'Start a server in this process on a free port, test it, stop it')
    .option('--json', 'Print a machine-readable report {passed, failed, checks: [{id, name, section, ok, reason}]}')
    .option('--admin-token <token>', 'Admin token of the --base server, for the compaction checks (skipped without it)', { type: [String] })
    .option('--only <ids>', 'Run only checks whose id contains one of these strings (comma-separated)', { type: [String] })
    .option('--vendor <segment>', `Vendor segment of the --base server's identifiers (its bookkeeping types are <segment>.monitor.*; default ${ownVendor}); a bare name such as mentu means ai.mentu`, {
      type: [String],
    })
    .option('--spec-only', "Run only the checks the base specification requires, leaving out Vigil's own stricter rules (marked * in the table), to measure another implementation fairly")
    .example('vigil conform --self')
    .example('vigil conform --base http://127.0.0.1:8130 --json')
    .example('vigil conform --base https://monitors.example.com --vendor com.example')
    .example('vigil conform --base http://127.0.0.1:8124 --vendor mentu --spec-only')
    .action(async (flags: ConformFlags) => {
      const [{ runChecks }, { formatReport }, { conformanceChecks, specChecks }] = await Promise.all([
        import('../conform/runner.ts'),
        import('../conform/report.ts'),
        import('../conform/suite.ts'),
      ]);
      const base = stringFlag('--base', flags.base);
      const self = flags.self === true;
      if (base === undefined && !self) throw new UsageError('conform needs --base <url> or --self.');
      if (base !== undefined && self) throw new UsageError('conform takes --base <url> or --self, not both.');
      if (flags.self !== undefined && typeof flags.self !== 'boolean') throw new UsageError('--self takes no value.');
      if (base !== undefined && !/^https?:\/\/[^\s/]+/.test(base)) throw new UsageError(`--base takes an http(s) URL; got "${base}".`);
      const only = listFlag(flags.only);
      const vendor = vendorOf(stringFlag('--vendor', flags.vendor) ?? ownVendor);
      if (flags.specOnly !== undefined && typeof flags.specOnly !== 'boolean') throw new UsageError('--spec-only takes no value.');
      const specOnly = flags.specOnly === true;
      if (self && vendor !== ownVendor) throw new UsageError(`--self tests this server, whose vendor segment is ${ownVendor}; --vendor is for --base servers of other vendors.`);
      let adminToken = stringFlag('--admin-token', flags.adminToken);
      let stop: (() => Promise<void>) | undefined;
      let root: string;
      if (self) {
        // Loaded only here: `--base` must not depend on this package's server.
        const [{ startServer }, { serverDoors }, { randomBytes }] = await Promise.all([import('../server.ts'), import('../transport/doors.ts'), import('node:crypto')]);
        adminToken = `vga_${randomBytes(24).toString('base64url')}`;
        const server = await startServer({ port: 0, allowAdmin: adminToken, extensions: serverDoors });
        stop = () => server.close();
        root = `${server.url}/mp/v0`;
      } else {
        root = protocolRoot(base!);
        const unreachable = await reachability(root);
        if (unreachable) {
          process.stderr.write(`vigil conform: cannot reach ${root}: ${unreachable}\n`);
          exitWith(ExitCode.unreachable);
        }
      }
      let report: Awaited<ReturnType<typeof runChecks>>;
      try {
        report = await runChecks(specOnly ? specChecks : conformanceChecks, { base: root, adminToken, only, vendor });
      } finally {
        await stop?.();
      }
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ base: report.base, vendor, spec_only: specOnly, passed: report.passed, failed: report.failed, skipped: report.skipped, checks: report.checks.map(({ ms: _ms, ...rest }) => rest) }, null, 2)}\n`);
      } else {
        process.stdout.write(formatReport(report, process.stdout.columns ?? 160));
      }
      process.exitCode = report.failed > 0 ? ExitCode.failed : ExitCode.ok;
    });
}

/** Why the server cannot be reached at all, or undefined when it answers anything. */
async function reachability(root: string): Promise<string | undefined> {
  try {
    await fetchWithin(`${root}/monitors`, {}, 10_000, (response) => response.body?.cancel() ?? Promise.resolve());
    return undefined;
  } catch (error) {
    const cause = (error as Error).cause as (Error & { code?: string }) | undefined;
    return cause?.code ?? cause?.message ?? (error as Error).message;
  }
}

/** `http://host:port` or `http://host:port/mp/v0` → the /mp/v0 root. */
export function protocolRoot(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return /\/mp\/v0$/.test(trimmed) ? trimmed : `${trimmed}/mp/v0`;
}
