// `npx tsx bench/profiles/cluster-profile.ts [--seconds 6] [--cpu-only] [--rounds 1]`
// Issue 30 point 4: where a PostgreSQL node's CPU per publish goes. Runs the
// cluster bench's publish load (32 clients, one monitor) against a SQLite
// node and a PostgreSQL node, one after the other, each with --cpu-prof, and
// prints, for the samples taken while the load ran, the CPU µs per publish
// by area and the heaviest functions (self time). --cpu-only: no profiler,
// the two nodes' CPU per publish only (for A/B runs on the busy machine).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createTestDatabase } from '../../test/support/postgres.ts';
import { load } from '../lib/context.ts';
import { type BenchServer, startServer } from '../lib/server.ts';
import { createMonitor } from '../lib/setup.ts';
import { round } from '../lib/stats.ts';
import { breakdown, type CpuProfile, folded, windowed } from './flame.ts';

const argv = process.argv.slice(2);
const option = (name: string, fallback: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : fallback);
const seconds = option('seconds', 6);
const rounds = option('rounds', 1);
const cpuOnly = argv.includes('--cpu-only');
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

// Areas of a cluster node, innermost matching frame first (flame.ts's areas name the rest).
const clusterAreas: Array<[string, RegExp]> = [
  ['pg protocol (parse, serialize)', /pg-protocol\//],
  ['pg client', /\u00a0pg\/|pg-pool\//],
  ['kysely (build, compile, driver)', /kysely\//],
  ['PostgreSQL commit (pg-store)', /src\/store\/postgres\//],
  ['cluster node', /src\/cluster\//],
];

function selfTop(stacks: Map<string, number>, n: number): Array<[string, number]> {
  const self = new Map<string, number>();
  for (const [stack, us] of stacks) {
    const leaf = stack.slice(stack.lastIndexOf(';') + 1);
    self.set(leaf, (self.get(leaf) ?? 0) + us);
  }
  return [...self].sort((a, b) => b[1] - a[1]).slice(0, n);
}

/** µs per publish whose stack passes through a frame matching each rule (inclusive). */
function inclusive(stacks: Map<string, number>, units: number): Array<[string, number]> {
  const sums = new Map<string, number>();
  for (const [stack, us] of stacks) {
    const frames = stack.split(';');
    const seen = new Set<string>();
    for (const [name, re] of clusterAreas) if (frames.some((f) => re.test(f))) seen.add(name);
    for (const name of seen) sums.set(name, (sums.get(name) ?? 0) + us);
  }
  return [...sums].map(([k, us]) => [k, round(us / units, 1)]);
}

async function measure(label: string, pass: number, start: (flags: string[]) => Promise<BenchServer>): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-cluster-profile-'));
  const server = await start(cpuOnly ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  let from = 0;
  let to = 0;
  let cpuUs = 0;
  let units = 0;
  try {
    const owner = await createMonitor(server.request, `profile-${label}-${pass}`);
    const xacts0 = await transactions();
    from = monotonicUs();
    const result = await load(server, { mode: 'publish', concurrency: 32, durationMs: seconds * 1000, targets: [{ monitor: `profile-${label}-${pass}`, token: owner }] });
    to = monotonicUs();
    cpuUs = result.cpuUs;
    units = result.ok;
    const xacts = (await transactions()) - xacts0;
    console.log(`${label}: ${round(result.rate)} publishes/s, server CPU ${round(cpuUs)} µs per publish, ${units} publishes${label === 'postgres' ? `, ${xacts} PostgreSQL transactions (${round(units / Math.max(1, xacts), 2)} publishes each)` : ''}`);
  } finally {
    await server.stop();
  }
  if (!cpuOnly) {
    const file = readdirSync(dir).find((f) => f.endsWith('.001.cpuprofile'));
    if (file) {
      const stacks = folded(windowed(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, from, to));
      if (argv.includes('--folded')) writeFileSync(`/tmp/cluster-profile-${label}.folded`, `${[...stacks].map(([s, us]) => `${s} ${Math.round(us)}`).join('\n')}\n`);
      const areas = breakdown(stacks, units);
      console.log(`  main thread profiled: ${areas.totalUs} µs per publish`);
      for (const row of areas.rows.slice(0, 12)) console.log(`  ${row.area.padEnd(40)} ${String(row.us).padStart(8)} µs  ${row.share}%`);
      console.log('  inclusive:');
      for (const [area, us] of inclusive(stacks, units)) console.log(`  ${area.padEnd(40)} ${String(us).padStart(8)} µs`);
      console.log('  heaviest functions (self):');
      for (const [fn, us] of selfTop(stacks, 25)) console.log(`  ${String(round(us / units, 1)).padStart(8)} µs  ${fn.replaceAll('\u00a0', ' ')}`);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return cpuUs;
}

const database = await createTestDatabase();
const stats = new pg.Client({ connectionString: database.url });
await stats.connect();
/** Transactions committed in the bench's database (a statement outside one counts as one). */
const transactions = async () => {
  await stats.query('select pg_stat_clear_snapshot()');
  const { rows } = await stats.query<{ n: string }>('select xact_commit::text as n from pg_stat_database where datname = current_database()');
  return Number(rows[0]!.n);
};
try {
  for (let r = 0; r < rounds; r++) {
    const sqlite = await measure('sqlite', r, (nodeFlags) => startServer({ transport: 'uws', durable: true, nodeFlags }));
    const pg = await measure('postgres', r, (nodeFlags) => startServer({ transport: 'uws', durable: false, nodeFlags, args: ['--store', database.url] }));
    console.log(`ratio ${round(pg / sqlite, 2)}×`);
  }
} finally {
  await stats.end();
  await database.drop();
}
