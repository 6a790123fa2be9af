// Issue 17 point 4: what a PostgreSQL cluster costs. In one run, on this
// machine: publish, drain and lease rates of one PostgreSQL node against one
// SQLite server (the baseline), the same publish load spread over three
// nodes, cross-node wake latency (long-poll on node B, publish on node A)
// against a same-node wake, and server CPU per request per node, read from
// /proc, so that the scaling with more machines can be computed.
//   npx tsx bench/cluster.ts [--seconds 5] [--clients 32]
import { readFileSync, rmSync } from 'node:fs';
import { createTestDatabase, postgresUnavailable } from '../test/support/postgres.ts';
import { type ServerProcess, startServerProcess, tempDirs } from '../test/support/server-process.ts';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const seconds = Number(arg('seconds', '5'));
const clients = Number(arg('clients', '32'));

async function json(url: string, method: string, body?: unknown, token?: string): Promise<any> {
  const r = await fetch(url, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: r.status, ...(await r.json()) };
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? Number.NaN;
const r1 = (x: number) => Math.round(x * 10) / 10;
const ms2 = (x: number) => x.toFixed(2);

interface Rate {
  perSecond: number;
  /** Server CPU milliseconds per request, per node that served. */
  cpuMsPerRequest: number;
}

/** Runs `clients` loops of `step` against the nodes (round robin) for the bench's duration. */
async function rate(nodes: ServerProcess[], step: (node: ServerProcess, client: number, i: number) => Promise<boolean>): Promise<Rate> {
  const cpuBefore = nodes.map((n) => cpuSeconds(n.child.pid!));
  let done = 0;
  const end = Date.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; Date.now() < end; i++) if (await step(nodes[c % nodes.length]!, c, i)) done++;
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = nodes.reduce((sum, n, i) => sum + cpuSeconds(n.child.pid!) - cpuBefore[i]!, 0);
  return { perSecond: done / elapsed, cpuMsPerRequest: (cpu * 1000) / Math.max(1, done) };
}

async function publishRate(nodes: ServerProcess[]): Promise<Rate> {
  const m = await json(`${nodes[0]!.base}/monitors`, 'POST', {});
  return rate(nodes, async (node, c, i) => {
    const reply = await json(`${node.base}/monitors/${m.monitor.id}/observations`, 'POST', { type: 'bench.item', subject: `c${c}-${i}` }, m.owner_token);
    return reply.status === 201;
  });
}

/** A publish step where each client writes its own monitor (no two nodes race for one monitor). */
async function perClientMonitors(nodes: ServerProcess[]) {
  const monitors = await Promise.all(Array.from({ length: clients }, (_, c) => json(`${nodes[c % nodes.length]!.base}/monitors`, 'POST', {})));
  return async (node: ServerProcess, c: number, i: number) => {
    const m = monitors[c];
    const reply = await json(`${node.base}/monitors/${m.monitor.id}/observations`, 'POST', { type: 'bench.item', subject: `c${c}-${i}` }, m.owner_token);
    return reply.status === 201;
  };
}

async function drainRate(node: ServerProcess, stored: number): Promise<number> {
  const m = await json(`${node.base}/monitors`, 'POST', {});
  for (let i = 0; i < stored; i += 1000) {
    const observations = Array.from({ length: Math.min(1000, stored - i) }, (_, k) => ({ type: 'bench.item', subject: `s${i + k}` }));
    await json(`${node.base}/monitors/${m.monitor.id}/observations`, 'POST', { observations }, m.owner_token);
  }
  const sub = await json(`${node.base}/subscriptions`, 'POST', { monitor: m.monitor.id, subscriber: 'agent:drain' }, m.owner_token);
  const started = performance.now();
  let cursor = 1;
  let read = 0;
  for (;;) {
    const page = await json(`${node.base}/subscriptions/${sub.subscription.id}/pull?limit=1000&cursor=${cursor}`, 'GET', undefined, sub.token);
    read += page.observations.length;
    if (page.observations.length === 0 || page.next > page.head) break;
    cursor = page.next;
  }
  return read / ((performance.now() - started) / 1000);
}

async function leaseRate(nodes: ServerProcess[]): Promise<Rate> {
  const base = nodes[0]!.base;
  const m = await json(`${base}/monitors`, 'POST', { capabilities: ['observe', 'act'] });
  const subjects = Array.from({ length: clients }, (_, c) => ({ type: 'bench.task', subject: `job-${c}` }));
  await json(`${base}/monitors/${m.monitor.id}/observations`, 'POST', { observations: subjects }, m.owner_token);
  const subs = await Promise.all(
    Array.from({ length: clients }, (_, c) =>
      json(`${nodes[c % nodes.length]!.base}/subscriptions`, 'POST', { monitor: m.monitor.id, subscriber: `agent:w${c}`, capabilities: ['observe', 'act'] }, m.owner_token),
    ),
  );
  // One claim and one release per cycle, each worker on its own subject: the rate of lease operations.
  return rate(nodes, async (node, c) => {
    const path = `${node.base}/subscriptions/${subs[c].subscription.id}/leases`;
    const claim = await json(`${path}/claim`, 'POST', { subject: `job-${c}` }, subs[c].token);
    const release = await json(`${path}/release`, 'POST', { subject: `job-${c}` }, subs[c].token);
    return claim.status === 201 && release.status === 200;
  });
}

/** Milliseconds from a publish's send on `writer` until a long-poll waiting on `reader` returns it. */
async function wakeLatencies(writer: ServerProcess, reader: ServerProcess, samples: number): Promise<number[]> {
  const m = await json(`${writer.base}/monitors`, 'POST', {});
  const sub = await json(`${reader.base}/subscriptions`, 'POST', { monitor: m.monitor.id, subscriber: 'agent:waiter', from: 'head' }, m.owner_token);
  const out: number[] = [];
  // The subscribe wrote seq 2 (`subscribed`): the first wait is for seq 3.
  let cursor = 3;
  for (let i = 0; i < samples; i++) {
    const waiting = json(`${reader.base}/subscriptions/${sub.subscription.id}/pull?wait=10&cursor=${cursor}`, 'GET', undefined, sub.token);
    await new Promise((r) => setTimeout(r, 20));
    const sent = performance.now();
    const published = json(`${writer.base}/monitors/${m.monitor.id}/observations`, 'POST', { type: 'bench.wake' }, m.owner_token);
    const page = await waiting;
    if (page.observations.length !== 1) throw new Error(`the waiting pull returned ${page.observations.length} observations`);
    out.push(performance.now() - sent);
    await published;
    cursor = page.next;
  }
  return out;
}

const unavailable = await postgresUnavailable();
if (unavailable) {
  console.log(`bench/cluster: PostgreSQL is not available (${unavailable}); nothing measured`);
  process.exit(0);
}
const database = await createTestDatabase();
const servers: ServerProcess[] = [];
const start = async (args: string[]) => {
  const s = await startServerProcess({ args });
  servers.push(s);
  return s;
};
try {
  console.log(`bench/cluster: ${seconds} s per rate, ${clients} concurrent clients, one load process on the same machine`);
  const sqlite = await start([]);
  const pg1 = await start(['--store', database.url]);
  const rows: Array<[string, string, string, string]> = [];
  const pubSqlite = await publishRate([sqlite]);
  const pubPg = await publishRate([pg1]);
  rows.push(['publish /s', r1(pubSqlite.perSecond).toString(), r1(pubPg.perSecond).toString(), `${r1(pubPg.perSecond / pubSqlite.perSecond)}×`]);
  rows.push(['  server CPU ms per publish', ms2(pubSqlite.cpuMsPerRequest), ms2(pubPg.cpuMsPerRequest), `${r1(pubPg.cpuMsPerRequest / pubSqlite.cpuMsPerRequest)}×`]);
  const drainSqlite = await drainRate(sqlite, 20_000);
  const drainPg = await drainRate(pg1, 20_000);
  rows.push(['drain observations /s', r1(drainSqlite).toString(), r1(drainPg).toString(), `${r1(drainPg / drainSqlite)}×`]);
  const leaseSqlite = await leaseRate([sqlite]);
  const leasePg = await leaseRate([pg1]);
  rows.push(['lease claim+release cycles /s', r1(leaseSqlite.perSecond).toString(), r1(leasePg.perSecond).toString(), `${r1(leasePg.perSecond / leaseSqlite.perSecond)}×`]);
  rows.push(['  server CPU ms per cycle', ms2(leaseSqlite.cpuMsPerRequest), ms2(leasePg.cpuMsPerRequest), `${r1(leasePg.cpuMsPerRequest / leaseSqlite.cpuMsPerRequest)}×`]);
  console.log('\none node                         SQLite      PostgreSQL  ratio');
  for (const [name, a, b, ratio] of rows) console.log(`${name.padEnd(32)} ${a.padStart(10)}  ${b.padStart(10)}  ${ratio}`);

  const pg2 = await start(['--store', database.url]);
  const pg3 = await start(['--store', database.url]);
  const three = [pg1, pg2, pg3];
  const pubThree = await publishRate(three);
  const pubSpread = await rate(three, await perClientMonitors(three));
  console.log(`\nthree nodes, a monitor per client, publishes spread: ${r1(pubSpread.perSecond)}/s (${r1(pubSpread.perSecond / pubPg.perSecond)}× one node), server CPU ${ms2(pubSpread.cpuMsPerRequest)} ms per publish summed over nodes`);
  console.log(`three nodes, one monitor, publishes spread: ${r1(pubThree.perSecond)}/s (${r1(pubThree.perSecond / pubPg.perSecond)}× one node), server CPU ${ms2(pubThree.cpuMsPerRequest)} ms per publish summed over nodes`);
  const sameNode = await wakeLatencies(pg2, pg2, 200);
  const crossNode = await wakeLatencies(pg1, pg2, 200);
  const sqliteWake = await wakeLatencies(sqlite, sqlite, 200);
  console.log('\nwake: publish sent → long-poll returned (ms)      p50     p99');
  console.log(`  SQLite, same server                            ${r1(pct(sqliteWake, 0.5)).toString().padStart(5)}   ${r1(pct(sqliteWake, 0.99)).toString().padStart(5)}`);
  console.log(`  PostgreSQL, same node                          ${r1(pct(sameNode, 0.5)).toString().padStart(5)}   ${r1(pct(sameNode, 0.99)).toString().padStart(5)}`);
  console.log(`  PostgreSQL, publish on A, long-poll on B       ${r1(pct(crossNode, 0.5)).toString().padStart(5)}   ${r1(pct(crossNode, 0.99)).toString().padStart(5)}`);
} finally {
  await Promise.all(servers.map((s) => s.kill()));
  await database.drop();
  // The servers' temporary folders (startServerProcess): vitest's set-up removes them after a test file, nothing does here.
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}
