// The worker threads the bench's clients run in, so that one event loop never
// limits the load: started together, released together ("go"), stopped
// through a flag in shared memory that every thread watches, and asked for
// their event-loop utilisation at the end (near 1: the thread was the
// bottleneck, and the summary says so).
import { setMaxListeners } from 'node:events';
import { Worker } from 'node:worker_threads';

/** Slots of the shared counters. */
export const slot = { stop: 0, ended: 1, completed: 2, extra: 3 } as const;

export interface ThreadMessage {
  type: string;
  thread: number;
  [key: string]: unknown;
}

export interface ThreadPool {
  /** The shared counters (slot above). */
  readonly counters: Int32Array;
  /** Releases every thread's clients at once; `extra` goes with the message (e.g. the run's start). */
  go(extra?: Record<string, unknown>): void;
  post(message: unknown): void;
  /** Raises the stop flag. */
  stop(): void;
  /** Resolves when every thread has said "done" (or died); threads that do not within `graceMs` are terminated. */
  finished(graceMs: number): Promise<void>;
  terminate(): Promise<void>;
  /** Why a thread failed, if one did. */
  readonly failures: string[];
}

/**
 * Starts one thread per entry of `data` (each gets `{kind, thread, counters, ...data[i]}`), resolves
 * once each has said "ready". Every message goes to `onMessage`.
 */
export async function startThreads(kind: string, data: ReadonlyArray<Record<string, unknown>>, onMessage: (m: ThreadMessage) => void): Promise<ThreadPool> {
  const counters = new Int32Array(new SharedArrayBuffer(8 * Int32Array.BYTES_PER_ELEMENT));
  const failures: string[] = [];
  const done = new Set<number>();
  let allDone: () => void = () => {};
  const finishedAll = new Promise<void>((resolve) => {
    allDone = resolve;
  });
  const markDone = (i: number) => {
    done.add(i);
    if (done.size === data.length) allDone();
  };
  const ready: Array<Promise<void>> = [];
  const workers = data.map((d, thread) => {
    const worker = new Worker(new URL('./thread-entry.mjs', import.meta.url), { workerData: { kind, thread, counters, ...d } });
    ready.push(
      new Promise<void>((resolve, reject) => {
        worker.on('message', (m: ThreadMessage) => {
          if (m.type === 'ready') resolve();
          else {
            onMessage(m);
            if (m.type === 'done') markDone(thread);
          }
        });
        worker.once('error', (error) => {
          failures.push(`thread ${thread}: ${error.stack ?? error.message}`);
          reject(error);
          markDone(thread);
        });
        worker.once('exit', () => markDone(thread));
      }),
    );
    return worker;
  });
  const terminate = async () => {
    await Promise.all(workers.map((w) => w.terminate()));
  };
  try {
    await Promise.all(ready);
  } catch (error) {
    await terminate();
    throw error;
  }
  return {
    counters,
    failures,
    go: (extra = {}) => {
      for (const w of workers) w.postMessage({ ...extra, type: 'go' });
    },
    post: (message) => {
      for (const w of workers) w.postMessage(message);
    },
    stop: () => {
      Atomics.store(counters, slot.stop, 1);
      Atomics.notify(counters, slot.stop);
    },
    async finished(graceMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      });
      await Promise.race([finishedAll, late]);
      clearTimeout(timer);
      await terminate();
    },
    terminate,
  };
}

/** In a thread: says "ready" and resolves with the "go" message. */
export function readyThenGo<T extends { type: string }>(port: import('node:worker_threads').MessagePort, thread: number): Promise<T> {
  return new Promise<T>((resolve) => {
    const onMessage = (m: T) => {
      if (m.type !== 'go') return;
      port.off('message', onMessage);
      resolve(m);
    };
    port.on('message', onMessage);
    port.postMessage({ type: 'ready', thread });
  });
}

/** In a thread: an AbortSignal that aborts when the shared stop flag rises (checked every 20 ms). */
export function stopSignal(counters: Int32Array): AbortSignal {
  const controller = new AbortController();
  // Every client of the thread sleeps on it at once.
  setMaxListeners(0, controller.signal);
  const timer = setInterval(() => {
    if (Atomics.load(counters, slot.stop) !== 0) {
      clearInterval(timer);
      controller.abort();
    }
  }, 20);
  timer.unref();
  return controller.signal;
}
