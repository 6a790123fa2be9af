// `npx tsx bench/profiles/profile.ts <label> [publish,discover,lease,sse,pool,pool-items] [--seconds 8] [--streams 10000] [--jobs 20000] [--concurrency 25] [--postgres] [--floor]`
// Runs one scenario at a time against a `vigil serve --cpu-prof` server and
// keeps only the samples taken while the measured load ran (the profile's
// clock and process.hrtime are both CLOCK_MONOTONIC), then writes
// bench/profiles/<label>/<scenario>.{svg,folded,json}: a flame graph, its
// folded stacks and the CPU µs per request by area (see flame.ts).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { runChildren, startChild } from '../lib/children.ts';
import { client, json } from '../lib/http.ts';
import { type BenchServer, cpuSecondsOf, startServer } from '../lib/server.ts';
import { createMonitor, subscribe, subscribeMany, head, type Sub } from '../lib/setup.ts';
import { nowMs, round, sleep, summary } from '../lib/stats.ts';
import { createTestDatabase } from '../../test/support/postgres.ts';
import { breakdown, type CpuProfile, flameSvg, folded, windowed } from './flame.ts';

const argv = process.argv.slice(2);
const label = argv[0] ?? 'scratch';
const scenarios = (argv[1] && !argv[1].startsWith('--') ? argv[1] : 'discover,publish,lease,sse').split(',');
const option = (name: string, fallback: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const seconds = option('seconds', 8);
const streams = option('streams', 10_000);
// --concurrency: closed-loop clients per load process (two processes) for discover, publish and lease.
const concurrency = option('concurrency', 25);
// --cpu-only: no profiler, just the server's CPU per unit (for A/B runs on a busy machine).
const cpuOnly = argv.includes('--cpu-only');
// --postgres: the server is a cluster node on a PostgreSQL database of its own (made here, dropped after).
const onPostgres = argv.includes('--postgres');
// --floor: the same load against the bare durable server (bench/clients/bare-durable.mjs; discover, publish, lease), CPU only.
const onFloor = argv.includes('--floor');
const gcOnSignal = fileURLToPath(new URL('./gc-on-signal.cjs', import.meta.url));
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** Write syscalls (write, pwrite, writev: the WAL's frames, not socket sends) and bytes of the server process so far, from /proc/<pid>/io. */
function writesOf(pid: number): { calls: number; bytes: number } {
  try {
    const io = Object.fromEntries(readFileSync(`/proc/${pid}/io`, 'utf8').trim().split('\n').map((l) => l.split(': ')));
    return { calls: Number(io.syscw), bytes: Number(io.wchar) };
  } catch {
    return { calls: Number.NaN, bytes: Number.NaN };
  }
}

/** Write syscalls and KiB written per unit between two writesOf readings. */
const writesPer = (w0: { calls: number; bytes: number }, w1: { calls: number; bytes: number }, units: number) => ({
  writesPerUnit: round((w1.calls - w0.calls) / units, 3),
  writtenKiBPerUnit: round((w1.bytes - w0.bytes) / 1024 / units, 3),
});

interface Window {
  readonly from: number;
  readonly to: number;
  readonly requests: number;
  readonly unit: string;
  readonly cpuSeconds: number;
  readonly extra: Record<string, number>;
}

async function closedLoop(server: BenchServer, mode: string, extra: (i: number) => Record<string, unknown>): Promise<Window> {
  const cpu0 = server.cpuSeconds();
  const w0 = writesOf(server.pid);
  const from = monotonicUs();
  const results = await runChildren<{ ok: number; wins: number; failed: number; elapsedMs: number }>(
    'load',
    (i) => ({ base: server.base, mode, concurrency, durationMs: seconds * 1000, offset: i * concurrency, ...extra(i) }),
    2,
  );
  const to = monotonicUs();
  const requests = results.reduce((a, r) => a + r.ok + r.wins, 0);
  const rate = results.reduce((a, r) => a + r.ok, 0) / (Math.max(...results.map((r) => r.elapsedMs)) / 1000);
  const wins = results.reduce((a, r) => a + r.wins, 0);
  const cpuSeconds = server.cpuSeconds() - cpu0;
  return { from, to, requests, unit: 'request', cpuSeconds, extra: { rate: round(rate), failed: results.reduce((a, r) => a + r.failed, 0), wins, ...writesPer(w0, writesOf(server.pid), requests) } };
}

async function discover(server: BenchServer): Promise<Window> {
  return closedLoop(server, 'discover', () => ({}));
}

async function publish(server: BenchServer): Promise<Window> {
  const owner = await createMonitor(server.request, 'profile-publish');
  return closedLoop(server, 'publish', () => ({ targets: [{ monitor: 'profile-publish', token: owner }] }));
}

async function lease(server: BenchServer): Promise<Window> {
  const owner = await createMonitor(server.request, 'profile-lease', ['observe', 'act']);
  await json(server.request, 'POST', '/monitors/profile-lease/observations', { observations: Array.from({ length: 100 }, (_, i) => ({ type: 'bench.work', subject: `s${i}`, data: {} })) }, owner);
  const workers: Sub[] = [];
  for (let i = 0; i < 50; i++) workers.push(await subscribe(server.request, 'profile-lease', owner, `agent:worker-${i}`, { capabilities: ['observe', 'act'] }));
  return closedLoop(server, 'lease', (i) => ({ subscriptions: workers.slice(i * 25, (i + 1) * 25), subjects: 100 }));
}

/**
 * The worker pool of the queues rows (bench/clients/vigil-pool.ts, issue 46): `jobs` subjects published,
 * then 50 slots take-next and complete-and-next, one JSON-RPC batch per turn (`pool`) or one
 * complete {items} + next {count} call per turn (`pool-items`). The unit is a cycle (a subject taken and completed).
 */
async function poolOf(mode: 'rpc' | 'items', server: BenchServer): Promise<Window> {
  const jobs = option('jobs', 20_000);
  const name = `profile-pool-${mode}`;
  const owner = await createMonitor(server.request, name, ['observe', 'act']);
  for (let i = 0; i < jobs; i += 1000) {
    const observations = Array.from({ length: Math.min(1000, jobs - i) }, (_, j) => ({ type: 'bench.job', subject: `job-${i + j}`, data: { n: i + j } }));
    await json(server.request, 'POST', `/monitors/${name}/observations`, { observations }, owner);
  }
  const worker = await subscribe(server.request, name, owner, 'agent:pool', { capabilities: ['observe', 'act'] });
  const cpu0 = server.cpuSeconds();
  const w0 = writesOf(server.pid);
  const from = monotonicUs();
  const [r] = await runChildren<{ cycles: number; failed: number; elapsedMs: number; requests: number; cpuSeconds: number }>(
    'vigil-pool',
    () => ({ base: server.base, subscription: worker.id, token: worker.token, slots: 50, jobs, durationMs: seconds * 1000, mode }),
    1,
  );
  const to = monotonicUs();
  const cpuSeconds = server.cpuSeconds() - cpu0;
  return { from, to, requests: r!.cycles, unit: 'cycle', cpuSeconds, extra: { rate: round(r!.cycles / (r!.elapsedMs / 1000)), failed: r!.failed, httpRequests: r!.requests, poolCpuUsPerUnit: round((r!.cpuSeconds * 1e6) / r!.cycles, 1), ...writesPer(w0, writesOf(server.pid), r!.cycles) } };
}

/** 100 observations, one every 10 ms, to `streams` open event streams; the window is first publish → last arrival. */
async function sse(server: BenchServer): Promise<Window> {
  const owner = await createMonitor(server.request, 'profile-sse');
  const subs = await subscribeMany(server.request, 'profile-sse', owner, streams, 16);
  const cursor = (await head(server.request, 'profile-sse', owner)) + 1;
  const per = Math.ceil(streams / 4);
  const children = Array.from({ length: 4 }, (_, i) => startChild<{ deliveries: number; lastArrival: number; worst: Array<[number, number]> }>('sse', { base: server.base, streams: subs.slice(i * per, (i + 1) * per), cursor, expected: 100, timeoutMs: 60_000 }));
  const m0 = await liveMemory(server);
  await Promise.all(children.map((c) => c.ready));
  const m1 = await liveMemory(server);
  for (const c of children) c.go();
  await sleep(300);
  const publisher = client(server.base, 16);
  const cpu0 = server.cpuSeconds();
  const from = monotonicUs();
  const first = nowMs();
  const sent: Array<Promise<unknown>> = [];
  for (let i = 0; i < 100; i++) {
    const wait = first + i * 10 - nowMs();
    if (wait > 0) await sleep(wait);
    sent.push(json(publisher, 'POST', '/monitors/profile-sse/observations', { type: 'bench.fanout', subject: 'f', data: { sent: nowMs(), i } }, owner));
  }
  await Promise.all(sent);
  const results = await Promise.all(children.map((c) => c.result));
  const lastArrival = Math.max(...results.map((r) => r.lastArrival));
  // The server's work ended at the last arrival at the latest.
  const to = from + Math.round((lastArrival - first) * 1000);
  const deliveries = results.reduce((a, r) => a + r.deliveries, 0);
  const worst = new Map<number, number>();
  for (const r of results) for (const [sent, l] of r.worst) worst.set(sent, Math.max(worst.get(sent) ?? 0, l));
  const last = summary([...worst.values()]);
  return { from, to, requests: deliveries, unit: 'delivery', cpuSeconds: server.cpuSeconds() - cpu0, extra: { deliveries, spanMs: round(lastArrival - first), lastStreamP50Ms: round(last.p50), lastStreamP99Ms: round(last.p99), rssPerStreamKB: round((m1.rss - m0.rss) / streams / 1024, 2), heapPerStreamKB: round((m1.heapUsed - m0.heapUsed) / streams / 1024, 2) } };
}

/** The server's memory right after a full collection (gc-on-signal.cjs). */
async function liveMemory(server: BenchServer) {
  process.kill(server.pid, 'SIGUSR2');
  await sleep(500);
  return server.memory();
}

const run: Record<string, (s: BenchServer) => Promise<Window>> = { discover, publish, lease, sse, pool: (s) => poolOf('rpc', s), 'pool-items': (s) => poolOf('items', s) };
/** The bare durable server of the floor rows, as a BenchServer for the closed loops above (no monitors to create: any id, bearer `bare`). */
async function startFloor(): Promise<BenchServer & { stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['bench/clients/bare-durable.mjs'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^listening (\d+)$/.exec(line);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the bare durable server exited (${code}) before listening`)));
  });
  const base = `http://127.0.0.1:${port}/mp/v0`;
  const exited = new Promise((r) => child.once('exit', r));
  const unused = () => Promise.reject(new Error('not on the floor'));
  return {
    base,
    pid: child.pid!,
    transport: 'uws',
    request: client(base, 8),
    rss: unused,
    memory: unused,
    liveMemory: unused,
    cpuSeconds: () => cpuSecondsOf(child.pid!),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const floorRun: Record<string, (s: BenchServer) => Promise<Window>> = {
  discover,
  publish: (s) => closedLoop(s, 'publish', () => ({ targets: [{ monitor: 'bare', token: 'bare' }] })),
  lease: (s) => closedLoop(s, 'lease', (p) => ({ subscriptions: Array.from({ length: 25 }, (_, i) => ({ id: `w${p * 25 + i}`, token: 'bare' })), subjects: 100 })),
};
if (onFloor) {
  for (const name of scenarios) {
    const server = await startFloor();
    let window: Window;
    try {
      // Warmed first, as in the floor scenario.
      await closedLoop(server, 'discover', () => ({}));
      window = await floorRun[name]!(server);
    } finally {
      await server.stop();
    }
    console.log(`floor ${name}: ${window.requests} ${window.unit}s, server CPU ${round((window.cpuSeconds * 1e6) / window.requests, 2)} µs per ${window.unit} ${JSON.stringify(window.extra)}`);
  }
  process.exit(0);
}

const outDir = join('bench/profiles', label);
mkdirSync(outDir, { recursive: true });
for (const name of scenarios) {
  const profileDir = mkdtempSync(join(tmpdir(), 'vigil-profile-'));
  const database = onPostgres ? await createTestDatabase() : undefined;
  const server = await startServer({
    transport: 'uws',
    durable: !database,
    nodeFlags: [...(cpuOnly ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]), '--expose-gc', '--require', gcOnSignal],
    ...(database && { args: ['--store', database.url] }),
  });
  let window: Window;
  try {
    window = await run[name]!(server);
  } finally {
    await server.stop();
    await database?.drop();
  }
  if (cpuOnly) {
    rmSync(profileDir, { recursive: true, force: true });
    console.log(`${name}: ${window.requests} ${window.unit}s, server CPU ${round((window.cpuSeconds * 1e6) / window.requests, 2)} µs per ${window.unit} ${JSON.stringify(window.extra)}`);
    continue;
  }
  const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`the server wrote no profile in ${profileDir}`);
  const profile = windowed(JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile, window.from, window.to);
  rmSync(profileDir, { recursive: true, force: true });
  const stacks = folded(profile);
  const areas = breakdown(stacks, window.requests);
  const cpuUs = round((window.cpuSeconds * 1e6) / window.requests, 2);
  const title = `${name} (${label}): ${window.requests} ${window.unit}s, server CPU ${cpuUs} µs per ${window.unit} (utime+stime), profiled main thread ${areas.totalUs} µs`;
  writeFileSync(join(outDir, `${name}.folded`), `${[...stacks].map(([stack, us]) => `${stack} ${Math.round(us)}`).join('\n')}\n`);
  writeFileSync(join(outDir, `${name}.svg`), flameSvg(stacks, title));
  writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify({ scenario: name, label, ...window, cpuUsPerUnit: cpuUs, areas }, null, 2)}\n`);
  console.log(`\n${title}\n${JSON.stringify(window.extra)}`);
  for (const a of areas.rows) console.log(`  ${a.area.padEnd(44)} ${String(a.us).padStart(7)} µs  ${String(a.share).padStart(5)} %`);
}
