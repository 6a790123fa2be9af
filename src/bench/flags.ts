// The command line of `vigil bench`, from cac's flag object to a BenchSpec:
// which flags each scenario takes, their defaults, and a refusal naming the
// flag for anything else (a flag of another scenario included).
import { randomInt } from 'node:crypto';
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  type BenchSpec,
  BenchUsageError,
  baseFlag,
  defaultThreads,
  durationFlag,
  type FanoutSpec,
  fractionFlag,
  holdFlag,
  type LeaseSpec,
  numberFlag,
  type PublishSpec,
  sizeFlag,
  skewFlag,
  type TargetSpec,
  wholeFlag,
} from './spec.ts';
import { protocolRoot } from './wire.ts';

export const scenarios = ['leases', 'fanout', 'publish'] as const;
export type Scenario = (typeof scenarios)[number];

/** Flags every scenario takes (camel-cased as cac gives them). */
const common = ['base', 'threads', 'seed', 'timeout', 'registrationToken', 'monitor', 'ownerToken', 'keep', 'json', 'report', 'compare', 'quiet', 'duration'];
const own: Record<Scenario, string[]> = {
  leases: ['mode', 'clients', 'subjects', 'skew', 'hold', 'cycles', 'leaseSeconds', 'renew', 'crash', 'stall', 'release', 'reject'],
  fanout: ['streams', 'subscriptions', 'rate', 'size', 'events', 'reconnectStorm', 'drain', 'pid'],
  publish: ['connections', 'size'],
};

const kebab = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

/** The last value of a flag given once or more (cac gives a list for `type: [String]`). */
export function last(value: unknown): string | undefined {
  const v = Array.isArray(value) ? value.at(-1) : value;
  if (v === undefined) return undefined;
  if (v === true || v === '') return '';
  return String(v);
}

/** Every value of a repeatable, comma-separated flag. */
export function all(value: unknown): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(',')).map((s) => s.trim()).filter(Boolean);
}

/** --report's file, refused before the run when it could not be written after it (a run may take minutes). */
export function reportFile(value: unknown): string | undefined {
  const file = last(value);
  if (file === undefined) return undefined;
  if (file === '') throw new BenchUsageError('--report needs a file name, e.g. --report r.html.');
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw new BenchUsageError(`--report names a folder, ${file}; name the file, e.g. --report ${join(file, 'report.html')}.`);
  const folder = dirname(resolve(file));
  if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory()) throw new BenchUsageError(`--report ${file}: the folder ${folder} does not exist; make it first, or name a file in a folder that does.`);
  try {
    accessSync(folder, constants.W_OK);
  } catch {
    throw new BenchUsageError(`--report ${file}: the folder ${folder} cannot be written to; name a file in a folder you can write.`);
  }
  return file;
}

function need(flag: string, value: unknown): string | undefined {
  const v = last(value);
  if (v === '') throw new BenchUsageError(`--${flag} needs a value.`);
  return v;
}

export function parseBenchFlags(scenario: string, flags: Record<string, unknown>): BenchSpec {
  if (!(scenarios as readonly string[]).includes(scenario)) throw new BenchUsageError(`vigil bench takes one of ${scenarios.join(', ')}; got "${scenario}".`);
  const kind = scenario as Scenario;
  for (const [name, value] of Object.entries(flags)) {
    if (name === '--' || name.length === 1 || value === undefined) continue;
    if (common.includes(name) || own[kind].includes(name)) continue;
    const other = scenarios.find((s) => own[s].includes(name));
    if (other) throw new BenchUsageError(`--${kebab(name)} is a flag of vigil bench ${other}, not of ${kind}.`);
  }
  const target = targetSpec(flags, kind);
  if (kind === 'leases') return leaseSpec(flags, target);
  if (kind === 'fanout') return fanoutSpec(flags, target);
  return publishSpec(flags, target);
}

function targetSpec(flags: Record<string, unknown>, kind: Scenario): TargetSpec {
  const bases = baseFlag(all(flags.base)).map(protocolRoot);
  const monitor = need('monitor', flags.monitor);
  const ownerToken = need('owner-token', flags.ownerToken);
  if ((monitor === undefined) !== (ownerToken === undefined)) throw new BenchUsageError('--monitor and --owner-token go together: the existing monitor to use, and its owner token.');
  const seedText = need('seed', flags.seed);
  const registrationToken = need('registration-token', flags.registrationToken);
  const clientsFor = kind === 'leases' ? 'clients' : kind === 'fanout' ? 'streams' : 'connections';
  const count = flags[clientsFor] === undefined ? undefined : Number(last(flags[clientsFor]));
  const threadsText = need('threads', flags.threads);
  return {
    bases,
    ...(registrationToken !== undefined ? { registrationToken } : {}),
    ...(monitor !== undefined ? { monitor, ownerToken } : {}),
    keep: flags.keep === true,
    threads: threadsText === undefined ? defaultThreads(Number.isSafeInteger(count) ? count! : 50) : wholeFlag('--threads', threadsText, 1, 64),
    timeoutMs: flags.timeout === undefined ? 30_000 : durationFlag('--timeout', need('timeout', flags.timeout), { min: 100, max: 600_000 }),
    seed: seedText === undefined ? randomInt(0, 2 ** 31) : wholeFlag('--seed', seedText, 0, 2 ** 32 - 1),
  };
}

function leaseSpec(flags: Record<string, unknown>, target: TargetSpec): LeaseSpec {
  const mode = need('mode', flags.mode) ?? 'named';
  if (mode !== 'named' && mode !== 'next') throw new BenchUsageError(`--mode takes named (claim a subject drawn with --skew) or next (take the next subject, then complete-and-take-next); got "${mode}".`);
  if (mode === 'next' && flags.skew !== undefined) throw new BenchUsageError('--skew draws the subject of a named claim; with --mode next the server picks the subject. Leave --skew out.');
  const leaseSeconds = flags.leaseSeconds === undefined ? 2 : wholeFlag('--lease-seconds', need('lease-seconds', flags.leaseSeconds), 1, 86_400);
  const renewMs = flags.renew === undefined ? Math.round((leaseSeconds * 1000) / 3) : durationFlag('--renew', need('renew', flags.renew), { min: 10 });
  if (renewMs >= leaseSeconds * 1000) throw new BenchUsageError(`--renew must be shorter than the lease (--lease-seconds ${leaseSeconds}), or a holder loses its lease between renewals; got ${renewMs} ms.`);
  const cycles = flags.cycles === undefined ? undefined : wholeFlag('--cycles', need('cycles', flags.cycles), 1, 1_000_000_000);
  const crash = flags.crash === undefined ? 0 : fractionFlag('--crash', need('crash', flags.crash));
  const stall = flags.stall === undefined ? 0 : fractionFlag('--stall', need('stall', flags.stall));
  if (crash + stall > 1) throw new BenchUsageError(`--crash and --stall are shares of the holds and add up to at most 1; got ${crash} + ${stall}.`);
  const release = flags.release === undefined ? 0 : fractionFlag('--release', need('release', flags.release));
  const reject = flags.reject === undefined ? 0 : fractionFlag('--reject', need('reject', flags.reject));
  if (release + reject > 1) throw new BenchUsageError(`--release and --reject are shares of the ends and add up to at most 1; got ${release} + ${reject}.`);
  return {
    ...target,
    kind: 'leases',
    mode,
    clients: flags.clients === undefined ? 50 : wholeFlag('--clients', need('clients', flags.clients), 1, 10_000),
    subjects: flags.subjects === undefined ? (mode === 'next' ? 10_000 : 100) : wholeFlag('--subjects', need('subjects', flags.subjects), 1, 1_000_000),
    skew: flags.skew === undefined ? { kind: 'uniform' } : skewFlag(need('skew', flags.skew)),
    hold: flags.hold === undefined ? { minMs: 10, maxMs: 10 } : holdFlag(need('hold', flags.hold)),
    durationMs: runLength(flags, cycles !== undefined),
    cycles,
    leaseSeconds,
    renewMs,
    crash,
    stall,
    release,
    reject,
  };
}

/** --duration, defaulting to 10 s unless a count (--cycles, --events) ends the run. */
function runLength(flags: Record<string, unknown>, counted: boolean): number | undefined {
  if (flags.duration !== undefined) return durationFlag('--duration', need('duration', flags.duration), { min: 100 });
  return counted ? undefined : 10_000;
}

function fanoutSpec(flags: Record<string, unknown>, target: TargetSpec): FanoutSpec {
  const streams = flags.streams === undefined ? 100 : wholeFlag('--streams', need('streams', flags.streams), 1, 100_000);
  const events = flags.events === undefined ? undefined : wholeFlag('--events', need('events', flags.events), 1, 10_000_000);
  const rate = flags.rate === undefined ? 100 : numberFlag('--rate', need('rate', flags.rate), 0.1, 100_000, 'publishes per second');
  const durationMs = runLength(flags, events !== undefined);
  const publishing = durationMs ?? (events! / rate) * 1000;
  let stormAtMs: number | undefined;
  if (flags.reconnectStorm !== undefined) {
    const at = last(flags.reconnectStorm);
    stormAtMs = at === '' || at === 'true' ? publishing / 2 : durationFlag('--reconnect-storm', at, { min: 1 });
    if (stormAtMs >= publishing) throw new BenchUsageError(`--reconnect-storm takes the time into the run at which every stream reconnects (default: halfway), before publishing ends at ${Math.round(publishing)} ms; got ${stormAtMs} ms.`);
  }
  const pidText = need('pid', flags.pid);
  return {
    ...target,
    kind: 'fanout',
    streams,
    subscriptions: flags.subscriptions === undefined ? streams : wholeFlag('--subscriptions', need('subscriptions', flags.subscriptions), 1, streams),
    rate,
    size: flags.size === undefined ? 256 : sizeFlag('--size', need('size', flags.size), 1 << 20),
    durationMs,
    events,
    stormAtMs,
    drainMs: flags.drain === undefined ? 10_000 : durationFlag('--drain', need('drain', flags.drain), { min: 100 }),
    pid: pidText === undefined ? undefined : wholeFlag('--pid', pidText, 1, 4_194_304),
  };
}

function publishSpec(flags: Record<string, unknown>, target: TargetSpec): PublishSpec {
  return {
    ...target,
    kind: 'publish',
    connections: flags.connections === undefined ? 50 : wholeFlag('--connections', need('connections', flags.connections), 1, 10_000),
    size: flags.size === undefined ? 256 : sizeFlag('--size', need('size', flags.size), 1 << 20),
    durationMs: runLength(flags, false)!,
  };
}
