// The lease yardstick a Node team would pick: BullMQ on the local Redis.
// `jobs` no-op jobs are added in bulk before the clock starts; one Worker
// with `concurrency` takes each job under BullMQ's lock and completes it,
// until every job is done or `durationMs` passes. Reports the cycles (jobs
// taken and completed) and this process's CPU; Redis's CPU is read by the
// parent from INFO, since the lock work happens there.
import { Queue, Worker } from 'bullmq';
import { childArgs, finish, readyThenGo } from '../lib/child-side.ts';
import { nowMs } from '../lib/stats.ts';

interface Args {
  concurrency: number;
  durationMs: number;
  jobs: number;
  port: number;
}

const args = childArgs<Args>();
const connection = { host: '127.0.0.1', port: args.port, maxRetriesPerRequest: null };
const name = `vigil-bench-${process.pid}`;
const queue = new Queue(name, { connection });
await queue.obliterate({ force: true });
for (let i = 0; i < args.jobs; i += 1000) {
  await queue.addBulk(Array.from({ length: Math.min(1000, args.jobs - i) }, (_, j) => ({ name: 'cycle', data: { subject: `s${(i + j) % 100}` }, opts: { removeOnComplete: true } })));
}
let cycles = 0;
await readyThenGo();
const cpu0 = process.cpuUsage();
const start = nowMs();
const worker = new Worker(name, async () => {}, { connection, concurrency: args.concurrency, autorun: false });
worker.on('completed', () => {
  cycles++;
});
const run = worker.run();
await new Promise<void>((done) => {
  const check = setInterval(() => {
    if (cycles >= args.jobs || nowMs() - start >= args.durationMs) {
      clearInterval(check);
      done();
    }
  }, 20);
});
const elapsedMs = nowMs() - start;
const cpu = process.cpuUsage(cpu0);
await worker.close(true);
await run.catch(() => {});
await queue.obliterate({ force: true });
await queue.close();
finish({ cycles, elapsedMs, cpuSeconds: (cpu.user + cpu.system) / 1e6 });
