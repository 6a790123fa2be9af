// How hard the load generator itself worked: the process's CPU time over the
// run (all threads), each thread's event-loop utilisation, and the machine's
// load average. A thread busy nearly all the time, or a process using nearly
// every core, means the figures may measure the client and not the server:
// the summary says so.
import { availableParallelism, loadavg } from 'node:os';

export interface ClientCpu {
  /** CPU seconds (user + system) of this process over the run. */
  cpuSeconds: number;
  wallSeconds: number;
  /** CPU over wall time: 1.0 is one core busy all the time. */
  coresUsed: number;
  cores: number;
  /** Event-loop utilisation per worker thread (0..1). */
  threadBusy: number[];
  /** 1-minute load average at the start and at the end. */
  load: [number, number];
  /** Why the load generator may have been the bottleneck; undefined when it was not. */
  saturated: string | undefined;
}

export function cpuMeter(): { stop(threadBusy: number[]): ClientCpu } {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const load0 = loadavg()[0]!;
  return {
    stop(threadBusy) {
      const used = process.cpuUsage(cpu0);
      const cpuSeconds = (used.user + used.system) / 1e6;
      const wallSeconds = (performance.now() - t0) / 1000;
      const cores = availableParallelism();
      const coresUsed = wallSeconds > 0 ? cpuSeconds / wallSeconds : 0;
      const busiest = threadBusy.length ? Math.max(...threadBusy) : 0;
      let saturated: string | undefined;
      if (busiest >= 0.9) {
        saturated = `a client thread was busy ${Math.round(busiest * 100)}% of the run: requests waited on the load generator, so latencies and rates may measure this client, not the server (add --threads, fewer clients per thread, or run the bench on another machine)`;
      } else if (coresUsed >= 0.9 * cores) {
        saturated = `the load generator used ${coresUsed.toFixed(2)} of the machine's ${cores} cores: the server under test had little CPU left if it runs here (run the bench on another machine)`;
      }
      return { cpuSeconds, wallSeconds, coresUsed, cores, threadBusy, load: [load0, loadavg()[0]!], saturated };
    },
  };
}
