// The piscina pool steps run on. The main thread hands a step over with a
// MessagePort for progress and cancellation, and keeps the process-group ids
// the worker reports so that it can kill them itself if a worker does not
// answer a cancel in time, or the process is about to exit.
import { getMaxListeners, setMaxListeners } from 'node:events';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { killGroup, terminateGroup } from '../process/process-group.ts';
import { ownStartTicks, runMarkerPrefix, signalTree } from '../process/process-tree.ts';
import type { MainMessage, StepOutcome, StepTask, WorkerMessage } from './step-task.ts';

export type StepTaskInput = Omit<StepTask, 'port'>;

export class StepPool {
  private readonly piscina: Piscina;
  private readonly liveGroups = new Set<number>();
  /** Abort listeners this pool holds on each caller's signal. */
  private readonly listening = new Map<AbortSignal, number>();

  /**
   * A thread supervises many steps at once (a step mostly waits on its agent's
   * process), so a wide run needs few threads: each costs a V8 isolate and a
   * loaded TypeScript worker.
   */
  constructor(maxThreads: number, tasksPerThread = 1) {
    this.piscina = new Piscina({
      filename: new URL('./worker-entry.mjs', import.meta.url).href,
      // Start every thread up front: a thread loads the TypeScript worker, which takes a moment.
      minThreads: Math.max(1, maxThreads),
      maxThreads: Math.max(1, maxThreads),
      concurrentTasksPerWorker: Math.max(1, tasksPerThread),
      idleTimeout: 30_000,
    });
  }

  /** Threads and steps per thread for `concurrency` steps at once. */
  static sizeFor(concurrency: number): { threads: number; perThread: number } {
    const perThread = 64;
    const threads = Math.min(2, Math.max(1, Math.ceil(concurrency / perThread)));
    return { threads, perThread: Math.max(1, Math.ceil(concurrency / threads)) };
  }

  run(input: StepTaskInput, onMessage: (m: WorkerMessage) => void, signal: AbortSignal): Promise<StepOutcome> {
    const { port1, port2 } = new MessageChannel();
    const groups = new Set<number>();
    let usageSeen = 0;
    port1.on('message', (m: WorkerMessage) => {
      if (m.type === 'usage') usageSeen += 1;
      if (m.type === 'spawned') {
        groups.add(m.pid);
        this.liveGroups.add(m.pid);
      } else if (m.type === 'exited') {
        groups.delete(m.pid);
        this.liveGroups.delete(m.pid);
      }
      onMessage(m);
    });
    let backstop: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      port1.postMessage({ type: 'cancel' } satisfies MainMessage);
      // The worker kills its groups within its grace period; this is the backstop.
      backstop = setTimeout(() => {
        for (const pid of groups) void terminateGroup(pid, 300);
      }, 1500);
    };
    if (signal.aborted) onAbort();
    else {
      // One listener per step, removed when it ends: a run with more than ten
      // steps at once is not a leak, so the warning's limit follows them.
      const listeners = (this.listening.get(signal) ?? 0) + 1;
      this.listening.set(signal, listeners);
      if (getMaxListeners(signal) < listeners + 10) setMaxListeners(listeners + 10, signal);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    const task: StepTask = { ...input, port: port2 };
    return (this.piscina.run(task, { transferList: [port2] }) as Promise<StepOutcome>)
      .then((outcome) => {
        // Reports still in flight on the port when the result came: delivered now, before the port is closed.
        for (const usage of outcome.usage?.slice(usageSeen) ?? []) onMessage({ type: 'usage', usage });
        usageSeen = outcome.usage?.length ?? usageSeen;
        return outcome;
      })
      .finally(() => {
      signal.removeEventListener('abort', onAbort);
      const left = (this.listening.get(signal) ?? 1) - 1;
      if (left > 0) this.listening.set(signal, left);
      else this.listening.delete(signal);
      if (backstop) clearTimeout(backstop);
      for (const pid of groups) {
        killGroup(pid, 'SIGKILL');
        this.liveGroups.delete(pid);
      }
      port1.close();
    });
  }

  /** Kills every process group still known; safe to call from an exit handler. */
  /** Kills every program this run started: their groups, and what left them (setsid, daemons). */
  killAll(): void {
    for (const pid of this.liveGroups) killGroup(pid, 'SIGKILL');
    this.liveGroups.clear();
    signalTree(null, runMarkerPrefix(), 'SIGKILL', true, ownStartTicks());
  }

  async close(): Promise<void> {
    this.killAll();
    await this.piscina.destroy();
  }
}
