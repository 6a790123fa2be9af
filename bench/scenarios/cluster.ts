// Issue 30 point 4: what a PostgreSQL node costs per publish against a SQLite
// node, measured in the same run with the same closed-loop load, and the
// cross-node wake (publish on node A, the long-poll parked on node B) beside
// the same publish-to-wake on the SQLite node. Both servers run uWS.
import { postgresUnavailable, createTestDatabase } from '../../test/support/postgres.ts';
import { runChildren } from '../lib/children.ts';
import { type BenchContext, load, type LoadResult } from '../lib/context.ts';
import { log } from '../lib/report.ts';
import { type BenchServer, startServer } from '../lib/server.ts';
import { createMonitor, head, subscribe } from '../lib/setup.ts';
import { round, summary } from '../lib/stats.ts';

const clients = 32;

async function publishLoad(ctx: BenchContext, server: BenchServer, monitor: string): Promise<LoadResult> {
  const owner = await createMonitor(server.request, monitor);
  return load(server, { mode: 'publish', concurrency: clients, durationMs: ctx.size.durationMs, targets: [{ monitor, token: owner }] });
}

/** Publish on `writer`, the pull parked on `reader`: p99 of publish sent → pull returned, and of the publish's own round trip. */
async function wakeP99(ctx: BenchContext, writer: BenchServer, reader: BenchServer, monitor: string): Promise<{ p99: number; own: number }> {
  const owner = await createMonitor(writer.request, monitor);
  const sub = await subscribe(writer.request, monitor, owner, 'agent:waker');
  const cursor = (await head(writer.request, monitor, owner)) + 1;
  const [woke] = await runChildren<{ latencies: number[]; publishLatencies: number[] }>(
    'wake',
    () => ({ base: writer.base, readerBase: reader.base, monitor, owner, subscription: sub.id, token: sub.token, cursor, samples: ctx.size.wakeSamples }),
    1,
  );
  return { p99: summary(woke!.latencies).p99, own: summary(woke!.publishLatencies).p99 };
}

export async function clusterScenario(ctx: BenchContext): Promise<void> {
  const unavailable = await postgresUnavailable();
  if (unavailable) {
    ctx.report.note(`cluster: not measured, ${unavailable}`);
    return;
  }
  const database = await createTestDatabase();
  const servers: BenchServer[] = [];
  try {
    const sqlite = await startServer({ transport: 'uws', durable: true, nodeFlags: ctx.nodeFlags });
    servers.push(sqlite);
    const nodeA = await startServer({ transport: 'uws', durable: false, nodeFlags: ctx.nodeFlags, args: ['--store', database.url] });
    servers.push(nodeA);
    const nodeB = await startServer({ transport: 'uws', durable: false, nodeFlags: ctx.nodeFlags, args: ['--store', database.url] });
    servers.push(nodeB);
    const onSqlite = await publishLoad(ctx, sqlite, 'bench-cluster-sqlite');
    const onPg = await publishLoad(ctx, nodeA, 'bench-cluster-pg');
    const scenario = '9 cluster';
    const sqliteRate = { name: 'SQLite node, same load', value: onSqlite.rate, unit: 'obs/s' };
    ctx.report.add('uws', { scenario, figure: `publish rate, one PostgreSQL node (${clients} clients)`, value: onPg.rate, unit: 'obs/s', baseline: sqliteRate, ratio: round(onPg.rate / onSqlite.rate, 2) });
    const ratio = round(onPg.cpuUs / onSqlite.cpuUs, 2);
    ctx.report.add('uws', {
      scenario,
      figure: 'server CPU per publish, PostgreSQL node',
      value: onPg.cpuUs,
      unit: 'µs',
      baseline: { name: 'server CPU per publish, SQLite node', value: onSqlite.cpuUs, unit: 'µs' },
      ratio,
      target: '≤ 2× SQLite',
      met: ratio <= 2,
    });
    if (onSqlite.failed + onPg.failed > 0) ctx.report.note(`cluster: ${onSqlite.failed + onPg.failed} failed publishes`);
    const local = await wakeP99(ctx, sqlite, sqlite, 'bench-cluster-wake-sqlite');
    const cross = await wakeP99(ctx, nodeA, nodeB, 'bench-cluster-wake-pg');
    ctx.report.add('uws', {
      scenario,
      figure: `wake p99, publish on node A → long-poll on node B (${ctx.size.wakeSamples} samples)`,
      value: cross.p99,
      unit: 'ms',
      baseline: { name: 'the same on one SQLite server, p99', value: local.p99, unit: 'ms' },
      ratio: round(cross.p99 / local.p99, 2),
    });
    log(`cluster: publish round trip p99 ${round(cross.own, 2)} ms on node A, ${round(local.own, 2)} ms on SQLite`);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await database.drop();
  }
}
