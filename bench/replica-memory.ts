// Issue 26 point 7: a cluster node's memory while it serves a monitor of
// 1,000,000 observations (test/support/big-monitor.ts: seeded straight into
// PostgreSQL, read through a node that does not hold the monitor's timers,
// dropped from its replica once cold, read again). Prints the node's peak
// resident memory against its own resident memory once started (the baseline,
// measured in the same run), and the time of each step.
//   npx tsx bench/replica-memory.ts [--observations 1000000] [--streamed 200000] [--budget 64]
import { readBigMonitor } from '../test/support/big-monitor.ts';
import { createTestDatabase, postgresUnavailable } from '../test/support/postgres.ts';
import { rmSync } from 'node:fs';
import { type ServerProcess, tempDirs } from '../test/support/server-process.ts';

const arg = (name: string, fallback: string): number => {
  const i = process.argv.indexOf(`--${name}`);
  return Number(i > 0 ? process.argv[i + 1]! : fallback);
};

const unavailable = await postgresUnavailable();
if (unavailable) {
  console.error(`replica-memory: ${unavailable}`);
  process.exit(1);
}
const database = await createTestDatabase();
const nodes: ServerProcess[] = [];
try {
  const run = await readBigMonitor({
    url: database.url,
    observations: arg('observations', '1000000'),
    streamed: arg('streamed', '200000'),
    budgetMB: arg('budget', '64'),
    started: (node) => nodes.push(node),
  });
  console.log(`observations: ${arg('observations', '1000000')}, replica budget ${arg('budget', '64')} MB`);
  console.log(`node RSS: idle ${run.idleRssMB} MB, peak ${run.peakRssMB} MB (${(run.peakRssMB / run.idleRssMB).toFixed(2)}x idle)`);
  for (const [step, seconds] of Object.entries(run.seconds)) console.log(`  ${step}: ${seconds} s, peak ${run.stepRssMB[step]} MB`);
  console.log(run.problems.length === 0 ? 'every page right' : `problems:\n${run.problems.join('\n')}`);
  console.log(`replica folders: ${run.replicaDirs.running} while running, ${run.replicaDirs.stopped} after the stop`);
  process.exitCode = run.problems.length === 0 ? 0 : 1;
} finally {
  await Promise.all(nodes.map((n) => n.kill()));
  await database.drop();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}
