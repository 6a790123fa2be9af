// One running workerd (through miniflare) for one version of a worker: its
// start under the time limit, its memory watched, and the two ways it ends
// (killed under its callers for a limit, or retired when replaced, deleted,
// idle or the server closes).
import type { Miniflare } from 'miniflare';
import type { MemoryWatch } from './worker-memory.ts';
import { workerdListeningOn } from './worker-memory.ts';
import type { WorkerOutbound } from './worker-outbound.ts';
import { guardWorkerdChildren } from './workerd-guard.ts';
import { withinLimit } from './within-limit.ts';

export const compatibilityDate = '2024-09-23';

export interface WorkerSource {
  script: string;
  bindings: Record<string, string>;
  /** The stored row's version this source is (cloud-store.ts). */
  version?: string;
  /** The API key the worker belongs to (runtimes are capped per key). */
  keyId?: string;
}

/** A worker went past a limit; `status` is what its caller is answered. */
export class WorkerLimitError extends Error {
  constructor(
    message: string,
    readonly status: 502 | 503 | 504,
  ) {
    super(message);
  }
}

/** One running workerd; `dead` once stopped (the next use starts another). */
export interface Instance {
  readonly mf: Miniflare;
  /**
   * Calls `listener` with the limit error when the instance is stopped under its callers (at once if it
   * was); the returned function stops listening. Listeners, not a promise raced by every request: a
   * reaction left on a promise that lives as long as the instance kept each request's answer alive.
   */
  onStopped(listener: (error: WorkerLimitError) => void): () => void;
  dead: boolean;
  /** Its workerd's resident memory at the last reading (0 until read, or where /proc is missing). */
  residentBytes: number;
  /** Stops it for a limit: its callers get `error`. */
  kill(error: WorkerLimitError): void;
  /** Stops it because it is replaced, deleted, idle or the server closes. */
  retire(): Promise<void>;
}

export interface InstanceOptions {
  readonly timeoutMs: number;
  /** The least time the top-level code gets (WorkerLimits.startMs). */
  readonly startMs: number;
  readonly memoryLimitBytes: number;
  readonly memory: MemoryWatch;
  readonly outbound: WorkerOutbound | undefined;
}

const mb = (n: number) => Math.round(n / (1 << 20));

export function lateError(name: string, what: string, timeoutMs: number): WorkerLimitError {
  return new WorkerLimitError(`Worker "${name}" did not finish its ${what} within ${timeoutMs / 1000} s; it was stopped and starts afresh on its next use.`, 504);
}

/**
 * Runs `work` under the time limit and while the instance lives; past the limit the instance is stopped.
 * It listens for the instance's end and lets go once settled: nothing of the request outlives it.
 */
export function runLimited<T>(name: string, instance: Instance, what: string, timeoutMs: number, work: (mf: Miniflare, signal: AbortSignal) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const controller = new AbortController();
    let done = false;
    let unlisten = () => {};
    const finish = (then: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unlisten();
      then();
    };
    const timer = setTimeout(() => {
      const error = lateError(name, what, timeoutMs);
      instance.kill(error);
      finish(() => reject(error));
    }, timeoutMs);
    unlisten = instance.onStopped((error) => {
      controller.abort();
      finish(() => reject(error));
    });
    work(instance.mf, controller.signal).then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}

/**
 * Starts a worker's workerd. Its top-level code runs here: one that never
 * finishes would leave `ready` unsettled and a core spinning, so it gets the
 * time limit too (at least startMs, 10 s unless set, for the process to start on a busy machine).
 */
export async function startInstance(name: string, source: WorkerSource, options: InstanceOptions): Promise<Instance> {
  const { Miniflare } = await import('miniflare');
  const mf = new Miniflare({
    modules: true,
    script: source.script,
    bindings: source.bindings,
    compatibilityDate,
    ...(options.outbound && { outboundService: options.outbound.fetch as never }),
  });
  const limitMs = Math.max(options.timeoutMs, options.startMs);
  let entry: URL;
  try {
    entry = await withinLimit(mf.ready, limitMs, () => new WorkerLimitError(`the script did not start within ${limitMs / 1000} s (its top-level code must finish)`, 504));
  } catch (error) {
    await mf.dispose().catch(() => {});
    throw error;
  }
  guardWorkerdChildren();
  const listeners = new Set<(error: WorkerLimitError) => void>();
  let killedWith: WorkerLimitError | undefined;
  let unwatch = () => {};
  const instance: Instance = {
    mf,
    onStopped(listener) {
      if (killedWith) {
        listener(killedWith);
        return () => {};
      }
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    dead: false,
    residentBytes: 0,
    kill(error) {
      if (instance.dead) return;
      instance.dead = true;
      killedWith = error;
      unwatch();
      for (const listener of [...listeners]) listener(error);
      listeners.clear();
      void mf.dispose().catch(() => {});
    },
    async retire() {
      instance.dead = true;
      unwatch();
      await mf.dispose().catch(() => {});
    },
  };
  const pid = workerdListeningOn(Number(entry.port));
  if (pid !== undefined) {
    unwatch = options.memory.watch(
      pid,
      (bytes) => {
        instance.kill(
          new WorkerLimitError(
            `Worker "${name}" went past its memory limit of ${mb(options.memoryLimitBytes)} MB (${mb(bytes)} MB); it was stopped and starts afresh on its next use.`,
            502,
          ),
        );
      },
      (bytes) => {
        instance.residentBytes = bytes;
      },
    );
  }
  return instance;
}
