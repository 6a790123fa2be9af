// `vigil bench leases|fanout|publish`: load and correctness benchmarks
// against any server that speaks the monitor protocol (one node, several, or
// another implementation). Flags are checked in src/bench/flags.ts; the run,
// the summary, --json, --report and --compare in src/bench/command.ts.
// Exit status, from the one table (src/errors/exit-codes.ts): 0 every promise
// kept, 1 a violation found, 2 usage error, 3 the server could not be reached
// or set up, 130 interrupted (Ctrl-C).
import type { CAC } from 'cac';
import { ExitCode } from '../errors/exit-codes.ts';
import { defineCommand, exitWith } from './command.ts';
import { UsageError } from './options.ts';

const scenarioHelp = 'leases (lease contention), fanout (event streams), publish (durable publishes)';

export function registerBenchCommands(cli: CAC): void {
  defineCommand(cli, 'bench <scenario>', `Benchmark a monitor server and judge its promises from the clients' own records: ${scenarioHelp}. docs/bench.md explains every figure`)
    .option('--base <url>', 'Server to measure (required); repeat it or separate with commas for several nodes: clients are spread over them', { type: [String] })
    .option('--duration <time>', 'How long to run, e.g. 30s or 2m (default 10s; with --cycles or --events, until those are reached)', { type: [String] })
    .option('--threads <n>', 'Worker threads the clients run on (default: one per core, 2 to 8)', { type: [String] })
    .option('--seed <n>', 'Seed of every random choice (default: random, printed); --compare reuses it', { type: [String] })
    .option('--timeout <time>', 'Give up on a request after this long (default 30s)', { type: [String] })
    .option('--registration-token <token>', 'For a server that requires registration to create the bench monitor', { type: [String] })
    .option('--monitor <id>', 'Use this existing monitor (with --owner-token) instead of creating one', { type: [String] })
    .option('--owner-token <token>', 'Owner token of --monitor', { type: [String] })
    .option('--keep', 'Leave the monitor the run created (it is retired at the end otherwise)')
    .option('--json', 'Print the figures as JSON instead of the summary')
    .option('--report <file.html>', 'Write a self-contained HTML report with charts', { type: [String] })
    .option('--compare <url>', 'Then run the same scenario with the same seed against this server and print each figure’s ratio', { type: [String] })
    .option('--quiet', 'No progress line and no setup steps on stderr')
    .option('--mode <mode>', 'leases: named (claim subjects drawn with --skew; default) or next (take-next, then complete-and-take-next)', { type: [String] })
    .option('--clients <n>', 'leases: concurrent clients, each its own subscription (default 50)', { type: [String] })
    .option('--subjects <n>', 'leases: subjects to contend for (default 100); in next mode the jobs published (default 10,000)', { type: [String] })
    .option('--skew <shape>', 'leases: uniform (default), zipf:<s> or hot:<fraction>', { type: [String] })
    .option('--hold <time>', 'leases: how long a holder keeps a lease, fixed (50ms) or a range (20ms-200ms); default 10ms', { type: [String] })
    .option('--cycles <n>', 'leases: stop after this many holds ended', { type: [String] })
    .option('--lease-seconds <n>', 'leases: lease duration asked for on each claim (default 2)', { type: [String] })
    .option('--renew <time>', 'leases: renew cadence while a hold outlasts it (default a third of the lease)', { type: [String] })
    .option('--crash <fraction>', 'leases: share of holds whose client dies holding the lease (default 0)', { type: [String] })
    .option('--stall <fraction>', 'leases: share of holds whose client stops renewing and ends past its lease, as a paused worker (default 0)', { type: [String] })
    .option('--release <fraction>', 'leases: share of holds ended by release instead of complete (default 0)', { type: [String] })
    .option('--reject <fraction>', 'leases: share of holds ended by reject (default 0; five rejects dead-letter a subject)', { type: [String] })
    .option('--streams <n>', 'fanout: open event streams (default 100)', { type: [String] })
    .option('--subscriptions <n>', 'fanout: subscriptions the streams share (default: one per stream)', { type: [String] })
    .option('--rate <n>', 'fanout: publishes per second, open loop (default 100)', { type: [String] })
    .option('--size <bytes>', 'fanout, publish: observation data size, e.g. 256 or 4KB (default 256)', { type: [String] })
    .option('--events <n>', 'fanout: stop publishing after this many', { type: [String] })
    .option('--reconnect-storm [at]', 'fanout: at this time into the run (default halfway) every stream reconnects with Last-Event-ID', { type: [String] })
    .option('--drain <time>', 'fanout: how long to wait for the streams after the last publish (default 10s)', { type: [String] })
    .option('--pid <pid>', "fanout: the server's process id when it runs here: its memory per stream is read from /proc", { type: [String] })
    .option('--connections <n>', 'publish: concurrent publishers, each on its own connection (default 50)', { type: [String] })
    .example('vigil bench leases --base http://127.0.0.1:8130 --clients 50 --subjects 100 --crash 0.05 --report r.html')
    .example('vigil bench leases --base http://a:8130 --base http://b:8130 --base http://c:8130 --skew zipf:1.1 --hold 20ms-200ms')
    .example('vigil bench fanout --base http://127.0.0.1:8130 --streams 10000 --rate 50 --reconnect-storm')
    .example('vigil bench publish --base http://127.0.0.1:8130 --connections 50 --compare http://127.0.0.1:8131')
    .action(async (scenario: string, flags: Record<string, unknown>) => {
      const [{ parseBenchFlags, all, reportFile }, { benchCommand }, { BenchUsageError }, { protocolRoot }] = await Promise.all([
        import('../bench/flags.ts'),
        import('../bench/command.ts'),
        import('../bench/spec.ts'),
        import('../bench/wire.ts'),
      ]);
      let spec: ReturnType<typeof parseBenchFlags>;
      let report: string | undefined;
      let compare: string[];
      try {
        spec = parseBenchFlags(scenario, flags);
        report = reportFile(flags.report);
        compare = all(flags.compare).map(protocolRoot);
        for (const url of compare) if (!/^https?:\/\/[^\s/]+/.test(url)) throw new BenchUsageError(`--compare takes http(s) URLs such as http://127.0.0.1:8131; got "${url}".`);
        for (const bare of ['json', 'keep', 'quiet'] as const) if (flags[bare] !== undefined && typeof flags[bare] !== 'boolean') throw new BenchUsageError(`--${bare} takes no value.`);
      } catch (error) {
        if (error instanceof BenchUsageError) throw new UsageError(error.message);
        throw error;
      }
      const interrupt = new AbortController();
      const onSigint = () => {
        if (interrupt.signal.aborted) exitWith(ExitCode.cancelled);
        process.stderr.write('\nvigil bench: stopping (Ctrl-C again to quit at once); the summary of what ran follows\n');
        interrupt.abort();
      };
      process.on('SIGINT', onSigint);
      try {
        process.exitCode = await benchCommand(spec, { json: flags.json === true, quiet: flags.quiet === true, report, compare }, { out: (t) => process.stdout.write(t), err: process.stderr, signal: interrupt.signal });
      } finally {
        process.off('SIGINT', onSigint);
      }
    });
}
