// `npm run bench [-- --quick] [-- --only publish,sse,...]`: starts real
// servers on loopback, drives them from separate load processes, prints a
// table of figures with their same-run baselines, and writes
// bench/results/<timestamp>.json. What each figure means: bench/README.md.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { runChildren } from './lib/children.ts';
import { client, json } from './lib/http.ts';
import { type BenchServer, startServer } from './lib/server.ts';
import { createMonitor, fill, head, subscribe, subscribeMany, type Sub } from './lib/setup.ts';
import { nowMs, round, sleep, summary } from './lib/stats.ts';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const onlyIndex = argv.indexOf('--only');
const only = onlyIndex >= 0 ? new Set((argv[onlyIndex + 1] ?? '').split(',')) : undefined;
const wanted = (name: string) => !only || only.has(name);
// --profile: every server writes a CPU profile to bench/results/profiles when it stops.
const nodeFlags = argv.includes('--profile') ? ['--cpu-prof', '--cpu-prof-dir=/tmp/vigil-bench-profiles'] : [];

const size = quick
  ? { durationMs: 3000, stored: 100_000, streams: 10_000, events: 100, leaseMs: 3000, wakeSamples: 100, subscriptions: 20_000 }
  : { durationMs: 10_000, stored: 1_000_000, streams: 10_000, events: 100, leaseMs: 10_000, wakeSamples: 300, subscriptions: 100_000 };
const loadProcesses = 2;
const sseProcesses = 4;

interface Row {
  scenario: string;
  figure: string;
  value: number;
  unit: string;
  baseline?: { name: string; value: number; unit: string };
  ratio?: number;
  target?: string;
  met?: boolean;
}
const rows: Row[] = [];
const notes: string[] = [];
const add = (row: Row) => {
  rows.push(row);
  const base = row.baseline ? `  (baseline ${row.baseline.name}: ${fmt(row.baseline.value)} ${row.baseline.unit}; ratio ${row.ratio})` : '';
  process.stderr.write(`bench: ${row.scenario} / ${row.figure}: ${fmt(row.value)} ${row.unit}${base}\n`);
};
const fmt = (n: number) => (Number.isFinite(n) ? (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : String(round(n, 2))) : 'n/a');
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
const loadAvg = () => os.loadavg().map((l) => round(l, 2));

interface LoadResult {
  ok: number;
  refused: number;
  failed: number;
  wins: number;
  elapsedMs: number;
}

/** Runs the closed-loop load child over `loadProcesses` processes; returns requests/s (and the sums). */
async function load(server: BenchServer, mode: 'discover' | 'publish' | 'lease', concurrency: number, extra: Record<string, unknown> = {}, durationMs = size.durationMs) {
  const processes = Math.min(loadProcesses, concurrency);
  const per = Math.ceil(concurrency / processes);
  const subs = extra.subscriptions as Sub[] | undefined;
  const cpu0 = server.cpuSeconds();
  const results = await runChildren<LoadResult>(
    'load',
    (i) => ({ base: server.base, mode, concurrency: per, durationMs, ...extra, ...(subs ? { subscriptions: subs.slice(i * per, (i + 1) * per) } : {}) }),
    processes,
  );
  const elapsed = Math.max(...results.map((r) => r.elapsedMs)) / 1000;
  const sum = (k: keyof LoadResult) => results.reduce((a, r) => a + r[k], 0);
  // Server CPU per request: independent of how busy the shared machine is.
  const cpuUs = ((server.cpuSeconds() - cpu0) * 1e6) / Math.max(1, sum('ok') + sum('wins'));
  return { rate: sum('ok') / elapsed, cpuUs, ok: sum('ok'), failed: sum('failed'), wins: sum('wins'), refused: sum('refused'), elapsed };
}

// ---- 1, 2, 5 and the stored-observations half of 6: one durable server ----

async function publishScenarios(): Promise<void> {
  const server = await startServer({ transport: 'uws', durable: true, nodeFlags });
  try {
    const owner = await createMonitor(server.request, 'bench-publish');
    const discover = await load(server, 'discover', 50);
    const one = await load(server, 'publish', 1, { monitor: 'bench-publish', token: owner });
    add({ scenario: '1 publish', figure: '1 client, sequential', value: one.rate, unit: 'obs/s', baseline: { name: 'GET /discover, 50 clients', value: discover.rate, unit: 'req/s' }, ratio: round(one.rate / discover.rate, 3) });
    const at0 = await load(server, 'publish', 50, { monitor: 'bench-publish', token: owner });
    add({ scenario: '1 publish', figure: '50 clients, empty store', value: at0.rate, unit: 'obs/s', baseline: { name: 'GET /discover, 50 clients', value: discover.rate, unit: 'req/s' }, ratio: round(at0.rate / discover.rate, 3), target: '≥ 30,000 obs/s', met: at0.rate >= 30_000 });
    add({ scenario: '1 publish', figure: 'server CPU per publish, 50 clients (→ one-core ceiling)', value: at0.cpuUs, unit: `µs (${fmt(1e6 / at0.cpuUs)}/s)`, baseline: { name: 'server CPU per GET /discover', value: discover.cpuUs, unit: 'µs' }, ratio: round(at0.cpuUs / discover.cpuUs, 2) });
    if (at0.failed + one.failed > 0) notes.push(`publish: ${at0.failed + one.failed} failed requests`);

    const rssBefore = await server.rss();
    const t0 = nowMs();
    await fill(server.request, 'bench-publish', owner, size.stored);
    log(`stored ${size.stored} observations in ${round((nowMs() - t0) / 1000, 1)} s (batches of 1000)`);
    const stored = (await head(server.request, 'bench-publish', owner));
    const atN = await load(server, 'publish', 50, { monitor: 'bench-publish', token: owner });
    add({ scenario: '1 publish', figure: `50 clients, ${fmt(stored)} stored`, value: atN.rate, unit: 'obs/s', baseline: { name: '50 clients, empty store', value: at0.rate, unit: 'obs/s' }, ratio: round(atN.rate / at0.rate, 3), target: quick ? `within 20% of empty (at ${fmt(size.stored)} in --quick, not 1,000,000)` : 'within 20% of empty', met: atN.rate >= 0.8 * at0.rate });
    add({ scenario: '1 publish', figure: `server CPU per publish, 50 clients, ${fmt(stored)} stored`, value: atN.cpuUs, unit: 'µs', baseline: { name: 'the same, empty store', value: at0.cpuUs, unit: 'µs' }, ratio: round(atN.cpuUs / at0.cpuUs, 2) });
    const rssStored = await server.rss();
    add({ scenario: '6 memory', figure: `server RSS, ${fmt(stored)} stored observations`, value: rssStored / 2 ** 20, unit: 'MB', baseline: { name: 'RSS before filling', value: rssBefore / 2 ** 20, unit: 'MB' }, ratio: round(rssStored / rssBefore, 2) });

    // 2. drain everything stored, from the start.
    const drainSub = await subscribe(server.request, 'bench-publish', owner, 'agent:drain', { from: 'earliest' });
    const [drained] = await runChildren<{ observations: number; pages: number; elapsedMs: number }>('drain', () => ({ base: server.base, subscription: drainSub.id, token: drainSub.token }), 1);
    const drainRate = drained!.observations / (drained!.elapsedMs / 1000);
    add({ scenario: '2 drain', figure: `pull limit=1000 + ack, ${fmt(drained!.observations)} obs`, value: drainRate, unit: 'obs/s', baseline: { name: 'publish, 50 clients, empty store', value: at0.rate, unit: 'obs/s' }, ratio: round(drainRate / at0.rate, 2), target: '≥ 100,000 obs/s', met: drainRate >= 100_000 });

    // 5. wake latency, at rest.
    await createMonitor(server.request, 'bench-wake').then(async (wakeOwner) => {
      const sub = await subscribe(server.request, 'bench-wake', wakeOwner, 'agent:waker');
      const cursor = (await head(server.request, 'bench-wake', wakeOwner)) + 1;
      const [woke] = await runChildren<{ latencies: number[] }>('wake', () => ({ base: server.base, monitor: 'bench-wake', owner: wakeOwner, subscription: sub.id, token: sub.token, cursor, samples: size.wakeSamples }), 1);
      const s = summary(woke!.latencies);
      add({ scenario: '5 wake', figure: `publish → waiting pull returns, p50 (${s.n} samples)`, value: s.p50, unit: 'ms' });
      add({ scenario: '5 wake', figure: 'publish → waiting pull returns, p99', value: s.p99, unit: 'ms', target: 'p99 < 5 ms at rest', met: s.p99 < 5 });
    });
  } finally {
    await server.stop();
  }
}

// ---- 3. SSE fan-out, once per transport ----

interface SseResult {
  opened: number;
  failures: number;
  deliveries: number;
  complete: number;
  lastArrival: number;
  worst: Array<[number, number]>;
  lastStream: number[];
}

async function sseScenario(transport: 'uws' | 'node'): Promise<{ deliveriesPerS: number } | undefined> {
  const server = await startServer({ transport, durable: true, nodeFlags });
  try {
    const owner = await createMonitor(server.request, 'bench-sse');
    const subs = await subscribeMany(server.request, 'bench-sse', owner, size.streams, 16);
    const cursor = (await head(server.request, 'bench-sse', owner)) + 1;
    await sleep(500);
    const m0 = await server.memory();
    const rss0 = m0.rss;
    const per = Math.ceil(size.streams / sseProcesses);
    const { startChild } = await import('./lib/children.ts');
    const children = Array.from({ length: sseProcesses }, (_, i) =>
      startChild<SseResult>('sse', { base: server.base, streams: subs.slice(i * per, (i + 1) * per), cursor, expected: size.events, timeoutMs: 60_000 }),
    );
    await Promise.race([Promise.all(children.map((c) => c.ready)), Promise.all(children.map((c) => c.result))]);
    await sleep(500);
    const m1 = await server.memory();
    const rss1 = m1.rss;
    log(`${transport}: heap ${round(m0.heapUsed / 2 ** 20)} → ${round(m1.heapUsed / 2 ** 20)} MB, resident subscription actors ${m0.residentSubscriptions} → ${m1.residentSubscriptions}`);
    for (const c of children) c.go();
    await sleep(300);
    const cpu0 = server.cpuSeconds();
    // Open loop: one publish every 10 ms whether or not the previous one was answered.
    const publisher = client(server.base, 16);
    const first = nowMs();
    const published: Array<Promise<unknown>> = [];
    for (let i = 0; i < size.events; i++) {
      const wait = first + i * 10 - nowMs();
      if (wait > 0) await sleep(wait);
      published.push(json(publisher, 'POST', '/monitors/bench-sse/observations', { type: 'bench.fanout', subject: 'f', data: { sent: nowMs(), i } }, owner));
    }
    await Promise.all(published);
    const results = await Promise.all(children.map((c) => c.result));
    const serverCpu = server.cpuSeconds() - cpu0;
    const opened = results.reduce((a, r) => a + r.opened, 0);
    const deliveries = results.reduce((a, r) => a + r.deliveries, 0);
    const complete = results.reduce((a, r) => a + r.complete, 0);
    const worst = new Map<number, number>();
    for (const r of results) for (const [sent, l] of r.worst) worst.set(sent, Math.max(worst.get(sent) ?? 0, l));
    const lastArrival = Math.max(...results.map((r) => r.lastArrival));
    const deliveriesPerS = deliveries / ((lastArrival - first) / 1000);
    const latest = summary([...worst.values()]);
    const lastOpened = summary(results.at(-1)!.lastStream);
    const perStream = (rss1 - rss0) / Math.max(1, opened);
    const scenario = `3 SSE ${transport}`;
    log(`${transport}: ${opened} streams open, ${complete} received all ${size.events}, ${deliveries} deliveries`);
    if (complete < opened) notes.push(`SSE ${transport}: only ${complete} of ${opened} streams received all ${size.events} observations within 60 s`);
    add({ scenario, figure: `publish → delivery on the last stream to get it, p50 (${fmt(opened)} streams)`, value: latest.p50, unit: 'ms' });
    add({ scenario, figure: 'publish → delivery on the last stream to get it, p99', value: latest.p99, unit: 'ms', ...(transport === 'uws' ? { target: 'p99 < 100 ms', met: latest.p99 < 100 } : {}) });
    add({ scenario, figure: 'publish → delivery on the last-opened stream, p50 / p99', value: lastOpened.p50, unit: `ms (p99 ${round(lastOpened.p99, 1)} ms)` });
    add({ scenario, figure: 'deliveries per second', value: deliveriesPerS, unit: 'deliveries/s' });
    const spanS = (lastArrival - first) / 1000;
    add({ scenario, figure: 'server CPU while delivering (share of one core)', value: (serverCpu / spanS) * 100, unit: `% (${round((serverCpu * 1e6) / Math.max(1, deliveries), 2)} µs per delivery)` });
    add({ scenario, figure: 'server memory per open stream (RSS delta / streams)', value: perStream / 1024, unit: 'KB', baseline: { name: 'RSS before the streams opened', value: rss0 / 2 ** 20, unit: 'MB' }, ratio: round(rss1 / rss0, 2), ...(transport === 'uws' ? { target: '< 4 KB per stream', met: perStream < 4096 } : {}) });
    return { deliveriesPerS };
  } finally {
    await server.stop();
  }
}

// ---- 4. lease contention, against Redis ----

async function redisPort(): Promise<number> {
  const port = 6379;
  const ping = () => {
    try {
      return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === 'PONG';
    } catch {
      return false;
    }
  };
  if (!ping()) {
    log('no redis-server answers on 127.0.0.1:6379; starting one');
    execFileSync('redis-server', ['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no']);
    for (let i = 0; i < 50 && !ping(); i++) await sleep(100);
  }
  return port;
}

async function leaseScenario(): Promise<void> {
  const port = await redisPort();
  const redis = await runChildren<{ attempts: number; wins: number; elapsedMs: number }>('redis', () => ({ concurrency: 25, durationMs: size.leaseMs, keys: 100, port }), loadProcesses);
  const redisRate = redis.reduce((a, r) => a + r.attempts, 0) / (Math.max(...redis.map((r) => r.elapsedMs)) / 1000);

  const server = await startServer({ transport: 'uws', durable: true, nodeFlags });
  try {
    const owner = await createMonitor(server.request, 'bench-lease', ['observe', 'act']);
    const audit = await subscribe(server.request, 'bench-lease', owner, 'agent:audit', { from: 'earliest' });
    await json(server.request, 'POST', '/monitors/bench-lease/observations', { observations: Array.from({ length: 100 }, (_, i) => ({ type: 'bench.work', subject: `s${i}`, data: {} })) }, owner);
    const workers: Sub[] = [];
    for (let i = 0; i < 50; i++) workers.push(await subscribe(server.request, 'bench-lease', owner, `agent:worker-${i}`, { capabilities: ['observe', 'act'] }));
    const result = await load(server, 'lease', 50, { subscriptions: workers, subjects: 100 }, size.leaseMs);
    const attemptsPerS = result.rate;
    add({ scenario: '4 lease', figure: 'claim attempts per second (50 clients, 100 subjects)', value: attemptsPerS, unit: 'claims/s', baseline: { name: 'Redis SET NX PX, 50 clients', value: redisRate, unit: 'attempts/s' }, ratio: round(attemptsPerS / redisRate, 3), target: '≥ 1/4 of Redis', met: attemptsPerS >= redisRate / 4 });
    add({ scenario: '4 lease', figure: 'server CPU per lease request', value: result.cpuUs, unit: 'µs' });
    add({ scenario: '4 lease', figure: 'claims won per second (each then completed)', value: result.wins / result.elapsed, unit: 'wins/s' });
    // Correctness: replay the lease observations; a claim while another holder holds is a violation.
    const holders = new Map<string, string | null>();
    let claims = 0;
    let violations = 0;
    for (;;) {
      const page = await json<{ next: number; observations: Array<{ type: string; data: { payload?: { action: string; subject: string; holder: string } } }> }>(server.request, 'GET', `/subscriptions/${audit.id}/pull?limit=1000`, undefined, audit.token);
      if (page.observations.length === 0) break;
      for (const o of page.observations) {
        const p = o.data.payload;
        if (o.type !== 'ai.vigil.monitor.lease' || !p) continue;
        const current = holders.get(p.subject) ?? null;
        if (p.action === 'claim') {
          claims++;
          if (current !== null && current !== p.holder) violations++;
          holders.set(p.subject, p.holder);
        } else if (['complete', 'release', 'reject', 'expired'].includes(p.action)) holders.set(p.subject, null);
      }
      await json(server.request, 'POST', `/subscriptions/${audit.id}/ack`, { cursor: page.next }, audit.token);
    }
    add({ scenario: '4 lease', figure: `two holders at once, over ${fmt(claims)} recorded claims`, value: violations, unit: 'violations', target: '0', met: violations === 0 });
    if (result.failed > 0) notes.push(`lease: ${result.failed} requests failed`);
  } finally {
    await server.stop();
  }
}

// ---- 6. memory with many live subscriptions ----

async function subscriptionMemory(): Promise<void> {
  const server = await startServer({ transport: 'uws', durable: true, nodeFlags });
  try {
    const owner = await createMonitor(server.request, 'bench-memory');
    await sleep(300);
    const rss0 = await server.rss();
    const t0 = nowMs();
    await subscribeMany(server.request, 'bench-memory', owner, size.subscriptions, 32);
    log(`created ${size.subscriptions} subscriptions in ${round((nowMs() - t0) / 1000, 1)} s`);
    await sleep(500);
    const burst = await server.memory();
    // The figure is taken at rest: right after a burst of 100k requests the heap still holds
    // their garbage, which V8 collects (and returns) once the server idles.
    await sleep(quick ? 5000 : 15_000);
    const m = await server.memory();
    const rss = m.rss;
    log(`memory: right after the burst RSS ${round(burst.rss / 2 ** 20)} MB (heap used ${round(burst.heapUsed / 2 ** 20)} MB); at rest RSS ${round(rss / 2 ** 20)} MB (heap used ${round(m.heapUsed / 2 ** 20)} MB); resident subscription actors ${m.residentSubscriptions}`);
    notes.push(`memory: RSS right after creating the subscriptions was ${fmt(burst.rss / 2 ** 20)} MB (garbage of the burst not yet collected); the table shows it at rest`);
    add({ scenario: '6 memory', figure: `server RSS, ${fmt(size.subscriptions)} live subscriptions`, value: rss / 2 ** 20, unit: 'MB', baseline: { name: 'RSS with none', value: rss0 / 2 ** 20, unit: 'MB' }, ratio: round(rss / rss0, 2), target: quick ? '< 400 MB at 100,000 (--quick measures 20,000)' : '< 400 MB', met: quick ? undefined : rss < 400 * 2 ** 20 });
    add({ scenario: '6 memory', figure: 'RSS per subscription', value: (rss - rss0) / size.subscriptions, unit: 'bytes' });
  } finally {
    await server.stop();
  }
}

// ---- run ----

const machine = {
  nproc: os.cpus().length,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  node: process.version,
  platform: `${os.type()} ${os.release()}`,
  memory_gb: round(os.totalmem() / 2 ** 30, 1),
};
const loadBefore = loadAvg();
const started = new Date();
log(`${quick ? 'quick' : 'full'} run on ${machine.nproc} × ${machine.cpu}, Node ${machine.node}, load ${loadBefore.join(' ')}`);
if (wanted('publish')) await publishScenarios();
const sse: Record<string, { deliveriesPerS: number } | undefined> = {};
if (wanted('sse')) {
  sse.uws = await sseScenario('uws');
  sse.node = await sseScenario('node');
  if (sse.uws && sse.node) notes.push(`SSE deliveries/s, uWebSockets.js over node:http: ×${round(sse.uws.deliveriesPerS / sse.node.deliveriesPerS, 2)}`);
}
if (wanted('lease')) await leaseScenario();
if (wanted('memory')) await subscriptionMemory();
const loadAfter = loadAvg();

const header = ['scenario', 'figure', 'value', 'baseline (same run)', 'ratio', 'target', 'met'];
const table = rows.map((r) => [
  r.scenario,
  r.figure,
  `${fmt(r.value)} ${r.unit}`,
  r.baseline ? `${r.baseline.name}: ${fmt(r.baseline.value)} ${r.baseline.unit}` : '',
  r.ratio === undefined ? '' : String(r.ratio),
  r.target ?? '',
  r.met === undefined ? '' : r.met ? 'yes' : 'NO',
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(line(header));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const t of table) console.log(line(t));
console.log(`\n${machine.nproc} × ${machine.cpu}, Node ${machine.node}; load average ${loadBefore.join(' ')} before, ${loadAfter.join(' ')} after${quick ? '; --quick' : ''}`);
for (const n of notes) console.log(`note: ${n}`);

mkdirSync('bench/results', { recursive: true });
const file = `bench/results/${started.toISOString().replace(/[:.]/g, '-')}.json`;
writeFileSync(file, `${JSON.stringify({ started: started.toISOString(), quick, machine, load: { before: loadBefore, after: loadAfter }, rows, notes }, null, 2)}\n`);
console.log(`results: ${file}`);
