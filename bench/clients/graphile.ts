// The PostgreSQL queue a Node team would pick: graphile-worker on the local
// PostgreSQL, in a database of its own. `jobs` no-op jobs are added in bulk
// before the clock starts; one runner with concurrency 50 works them, plain
// (each worker fetches its own job, completes it in its own statement) or
// batched (its recommended options for throughput: a local queue that locks
// and fetches 500 jobs per query, completions and failures flushed in
// batches). Reports the cycles (jobs completed), this process's CPU and the
// CPU of the PostgreSQL sessions the runner used.
import { readFileSync } from 'node:fs';
import { makeWorkerUtils, run } from 'graphile-worker';
import { childArgs, finish, readyThenGo } from '../lib/child-side.ts';
import { nowMs } from '../lib/stats.ts';

interface Args {
  connectionString: string;
  jobs: number;
  concurrency: number;
  durationMs: number;
  batched: boolean;
}

const args = childArgs<Args>();
const silent = () => () => {};
const logger = new (await import('graphile-worker')).Logger(silent);
const utils = await makeWorkerUtils({ connectionString: args.connectionString, logger });
await utils.migrate();
for (let i = 0; i < args.jobs; i += 1000) {
  await utils.addJobs(Array.from({ length: Math.min(1000, args.jobs - i) }, (_, j) => ({ identifier: 'cycle', payload: { n: i + j } })));
}
await utils.release();

let cycles = 0;
await readyThenGo();
const cpu0 = process.cpuUsage();
const start = nowMs();
const runner = await run({
  connectionString: args.connectionString,
  concurrency: args.concurrency,
  noHandleSignals: true,
  pollInterval: 1000,
  logger,
  taskList: { cycle: async () => {} },
  ...(args.batched && {
    preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  }),
});
runner.events.on('job:success', () => {
  cycles++;
});
await new Promise<void>((resolve) => {
  const check = setInterval(() => {
    if (cycles >= args.jobs || nowMs() - start >= args.durationMs) {
      clearInterval(check);
      resolve();
    }
  }, 10);
});
const elapsedMs = nowMs() - start;
const cpu = process.cpuUsage(cpu0);
// PostgreSQL does a queue's work in its own processes: the CPU of the sessions serving this database,
// all opened by the runner after the clock started (utime + stime from /proc, Linux clock ticks of 1/100 s).
const serverCpuSeconds = await postgresCpuSeconds(args.connectionString);
await runner.stop();
finish({ cycles, elapsedMs, cpuSeconds: (cpu.user + cpu.system) / 1e6, serverCpuSeconds });

async function postgresCpuSeconds(connectionString: string): Promise<number> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    let total = 0;
    for (const { pid } of rows) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        total += (Number(fields[11]) + Number(fields[12])) / 100;
      } catch {
        // A session that ended meanwhile.
      }
    }
    return total;
  } finally {
    await client.end();
  }
}
