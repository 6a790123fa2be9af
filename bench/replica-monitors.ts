// Issue 43 point 2: a cluster node's memory and replica file while it serves
// many monitors, every one touched in turn. One node on a database of its
// own (it holds every monitor's timers), `--replica-budget <MB>`; 1,000
// monitors get ~200 observations each in rounds of batches, monitor after
// monitor, then each monitor's state is read once more. The node's VmRSS
// and its replica file's size are sampled every 200 ms.
//   npx tsx bench/replica-monitors.ts [--monitors 1000] [--observations 200] [--budget 16]
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { call, createMonitor } from '../test/support/client.ts';
import { createTestDatabase, postgresUnavailable } from '../test/support/postgres.ts';
import { type ServerProcess, startServerProcess, tempDirs } from '../test/support/server-process.ts';

const arg = (name: string, fallback: string): number => {
  const i = process.argv.indexOf(`--${name}`);
  return Number(i > 0 ? process.argv[i + 1]! : fallback);
};
const monitorCount = arg('monitors', '1000');
const perMonitor = arg('observations', '200');
const budgetMB = arg('budget', '16');
const batch = 50;
const admin = 'vga_replica-monitors-bench-admin-token';

const unavailable = await postgresUnavailable();
if (unavailable) {
  console.error(`replica-monitors: ${unavailable}`);
  process.exit(1);
}
const mb = (bytes: number) => Math.round(bytes / (1 << 20));
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
function replicaBytes(pid: number): number {
  const tmp = /(?:^|\0)TMPDIR=([^\0]*)/.exec(readFileSync(`/proc/${pid}/environ`, 'utf8'))?.[1];
  if (!tmp) return 0;
  let total = 0;
  for (const dir of readdirSync(tmp).filter((d) => d.startsWith('vigil-replica-'))) {
    for (const f of readdirSync(join(tmp, dir))) total += statSync(join(tmp, dir, f)).size;
  }
  return total;
}

async function inParallel<T>(items: readonly T[], width: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      await work(items[i]!, i);
    }
  }));
}

const database = await createTestDatabase();
let node: ServerProcess | undefined;
let sampler: NodeJS.Timeout | undefined;
try {
  node = await startServerProcess({ args: ['--store', database.url, '--replica-budget', String(budgetMB), '--allow-admin', admin] });
  const pid = node.child.pid!;
  const idleRss = rssOf(pid);
  const peaks: Record<string, { rss: number; file: number }> = {};
  let phase = 'create';
  sampler = setInterval(() => {
    try {
      const p = peaks[phase] ?? { rss: 0, file: 0 };
      peaks[phase] = p;
      p.rss = Math.max(p.rss, rssOf(pid));
      p.file = Math.max(p.file, replicaBytes(pid));
    } catch {
      // The node is gone: the run reports it.
    }
  }, 200);
  const started = Date.now();
  const monitors: Array<{ id: string; ownerToken: string }> = new Array(monitorCount);
  // One at a time: creates racing on one node are not what is measured here.
  await inParallel([...Array(monitorCount).keys()], 1, async (i) => {
    monitors[i] = await createMonitor(node!.base, { capabilities: ['observe', 'act'] });
  });
  const padding = 'x'.repeat(200);
  for (let round = 0; round < perMonitor / batch; round++) {
    phase = `publish round ${round + 1}`;
    await inParallel(monitors, 8, async (m, i) => {
      const observations = Array.from({ length: batch }, (_, k) => ({ type: 'bench.item', subject: `s${(round * batch + k) % 20}`, data: { i, k, padding } }));
      const reply = await call(node!.base, 'POST', `/monitors/${m.id}/observations`, { token: m.ownerToken, body: { observations } });
      if (reply.status !== 201 && reply.status !== 200) throw new Error(`publish to monitor ${i}: ${reply.status} ${JSON.stringify(reply.body)}`);
    });
    console.log(`${phase}: ${Math.round((Date.now() - started) / 1000)} s, RSS ${mb(rssOf(pid))} MB, replica file ${mb(replicaBytes(pid))} MB`);
  }
  phase = 'read every monitor again';
  const heads = new Map<string, number>();
  await inParallel(monitors, 8, async (m) => {
    const reply = await call(node!.base, 'GET', `/monitors/${m.id}`, { token: m.ownerToken });
    const head = String(reply.body.head);
    heads.set(head, (heads.get(head) ?? 0) + 1);
  });
  console.log(`${phase}: heads ${JSON.stringify(Object.fromEntries(heads))}; RSS ${mb(rssOf(pid))} MB, replica file ${mb(replicaBytes(pid))} MB`);
  phase = 'settled';
  await new Promise((r) => setTimeout(r, 8000));
  console.log(`monitors ${monitorCount} x ${perMonitor} observations, replica budget ${budgetMB} MB, ${Math.round((Date.now() - started) / 1000)} s`);
  console.log(`node RSS idle ${mb(idleRss)} MB`);
  for (const [name, p] of Object.entries(peaks)) console.log(`  ${name}: peak RSS ${mb(p.rss)} MB, peak replica file ${mb(p.file)} MB`);
  console.log(`  now: RSS ${mb(rssOf(pid))} MB, replica file ${mb(replicaBytes(pid))} MB`);
  const drops = node.output().split('\n').filter((l) => l.includes('replica took'));
  console.log(`budget checks that dropped monitors: ${drops.length}${drops.length ? `; the last: ${drops.at(-1)}` : ''}`);
} finally {
  clearInterval(sampler);
  await node?.kill();
  await database.drop();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}
