// One miniflare (workerd) instance per deployed worker, started on first use
// and replaced when its script or bindings change. Requests are handed over
// with dispatchFetch and the answer turned back into a plain reply. On a
// cluster, where another node may change or delete the worker, each use first
// reads the row's version: a running instance of another version is replaced
// by the row's before the use, and a deleted worker is stopped.
//
// A worker's code is anyone's with an API key: a request or scheduled run
// that takes longer than the time limit is abandoned and the worker's
// workerd is restarted (a spinning isolate would otherwise hold a core and
// every later request for good), a workerd past the memory limit is stopped
// the same way (worker-memory.ts), an answer is read up to a size limit, and
// the worker's own fetches go out under the inward-address rules
// (worker-outbound.ts).
import type { Miniflare } from 'miniflare';
import { readBounded } from '../../net/read-bounded.ts';
import type { FullResponse, HttpRequest } from '../../transport/http-types.ts';
import { withinLimit } from './within-limit.ts';
import { MemoryWatch, workerdListeningOn } from './worker-memory.ts';
import { WorkerOutbound } from './worker-outbound.ts';
import { guardWorkerdChildren } from './workerd-guard.ts';

export interface WorkerSource {
  script: string;
  bindings: Record<string, string>;
  /** The stored row's version this source is (cloud-store.ts). */
  version?: string;
}

/** A started instance not yet serving: installed once its row is stored, or discarded. */
export interface PreparedWorker {
  install(): Promise<void>;
  discard(): Promise<void>;
}

export const compatibilityDate = '2024-09-23';

/** Miniflare answers this path itself (it runs the scheduled handler); no request from outside may reach it. */
const scheduledTrigger = '/cdn-cgi/mf/scheduled';
/**
 * Cloudflare keeps /cdn-cgi/ for itself, and so does miniflare: such paths are
 * not the worker's. Checked as the URL will be read (`/./cdn-cgi/…` is the same path).
 */
export function isReservedEdgePath(path: string): boolean {
  const pathname = new URL(path, 'http://edge.invalid').pathname;
  return pathname === '/cdn-cgi' || pathname.startsWith('/cdn-cgi/');
}

export interface WorkerLimits {
  /** A request (answer and body) or a scheduled run, in ms. */
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  /** Resident memory of a worker's workerd process. */
  readonly memoryBytes: number;
  /** The worker's fetches may reach loopback, private and link-local addresses (--allow-private-workers). */
  readonly allowPrivate: boolean;
}

export const defaultWorkerLimits: WorkerLimits = { timeoutMs: 30_000, maxResponseBytes: 32 << 20, memoryBytes: 256 << 20, allowPrivate: false };

/** A worker went past a limit; `status` is what its caller is answered. */
export class WorkerLimitError extends Error {
  constructor(
    message: string,
    readonly status: 502 | 504,
  ) {
    super(message);
  }
}

// Hop-by-hop and framing headers are the transport's business; the body is already decoded.
const dropped = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'content-encoding']);

/** One running workerd; `dead` once stopped for a limit (the next use starts another). */
interface Instance {
  readonly mf: Miniflare;
  /** Rejects with the limit error when the instance is stopped under its callers. */
  readonly stopped: Promise<never>;
  dead: boolean;
  /** Stops it for a limit: its callers get `error`. */
  kill(error: WorkerLimitError): void;
  /** Stops it because it is replaced, deleted or the server closes. */
  retire(): Promise<void>;
}

interface Running {
  readonly version: string | undefined;
  readonly instance: Promise<Instance>;
}

const retire = (entry: Running | undefined) => entry?.instance.then((old) => old.retire()).catch(() => {});

export class WorkerRuntimes {
  private readonly running = new Map<string, Running>();
  private readonly memory: MemoryWatch;
  private readonly outbound: WorkerOutbound | undefined;

  constructor(
    private readonly load: (name: string) => Promise<WorkerSource | undefined>,
    private readonly limits: WorkerLimits = defaultWorkerLimits,
    /** The stored version of a worker, read before each use when other nodes may change it (a cluster). */
    private readonly versionOf?: (name: string) => Promise<string | undefined>,
  ) {
    this.memory = new MemoryWatch(limits.memoryBytes);
    this.outbound = limits.allowPrivate ? undefined : new WorkerOutbound(limits.timeoutMs);
  }

  /**
   * Starts the worker from `source`, checking that it starts; it serves once installed (after its row is
   * stored), so a script that fails to start leaves the deployed one running.
   */
  async prepare(name: string, source: WorkerSource): Promise<PreparedWorker> {
    const instance = await this.start(name, source);
    return {
      install: async () => {
        const previous = this.running.get(name);
        this.running.set(name, { version: source.version, instance: Promise.resolve(instance) });
        await retire(previous);
      },
      discard: () => instance.retire(),
    };
  }

  /** Starts the worker from `source` (checking that it starts), replacing a running one. */
  async replace(name: string, source: WorkerSource): Promise<void> {
    await (await this.prepare(name, source)).install();
  }

  async stop(name: string): Promise<void> {
    const previous = this.running.get(name);
    this.running.delete(name);
    await retire(previous);
  }

  /** The worker's live instance, started when there is none (or it was stopped, or is stale); undefined when not deployed. */
  private async instance(name: string): Promise<Instance | undefined> {
    const wanted = this.versionOf && (await this.versionOf(name));
    if (this.versionOf && wanted === undefined) {
      await this.stop(name);
      return undefined;
    }
    let stale: Running | undefined;
    for (;;) {
      const current = this.running.get(name);
      if (!current) break;
      if (wanted !== undefined && current.version !== wanted) {
        stale = current;
        break;
      }
      const live = await current.instance.catch(() => undefined);
      if (live && !live.dead) return live;
      if (this.running.get(name) === current) {
        this.running.delete(name);
        break;
      }
      // Replaced meanwhile: look again.
    }
    const source = await this.load(name);
    if (!source) {
      if (stale) await this.stop(name);
      return undefined;
    }
    // Another use may have started this version while the row was read.
    const now = this.running.get(name);
    if (now && now !== stale && (!this.versionOf || now.version === source.version)) {
      const live = await now.instance.catch(() => undefined);
      if (live && !live.dead) return live;
    }
    const previous = this.running.get(name);
    const started = this.start(name, source);
    const entry: Running = { version: source.version, instance: started };
    this.running.set(name, entry);
    // The stale instance goes once its successor is up (or failed: it is stale either way).
    void started.then(
      () => retire(previous),
      () => {
        if (this.running.get(name) === entry) this.running.delete(name);
        return retire(previous);
      },
    );
    return started;
  }

  /** Answers `request` with the worker, or undefined when no such worker is deployed. */
  async fetch(name: string, path: string, request: HttpRequest): Promise<FullResponse | undefined> {
    const instance = await this.instance(name);
    if (!instance) return undefined;
    const host = request.headers.host ?? 'localhost';
    const url = `http://${host}${path}${request.query ? `?${request.query}` : ''}`;
    const headers = Object.entries(request.headers).filter(([k]) => !dropped.has(k));
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    return this.limited(name, instance, 'request', async (mf, signal) => {
      const response = await mf.dispatchFetch(url, { method: request.method, headers, body: hasBody ? request.body : undefined, signal });
      const chunks: Uint8Array[] = [];
      const read = await readBounded(response, this.limits.maxResponseBytes, (chunk) => chunks.push(chunk));
      if (read.truncated) {
        throw new WorkerLimitError(`Worker "${name}" answered more than ${this.limits.maxResponseBytes} bytes; the answer was dropped.`, 502);
      }
      const out: Record<string, string> = {};
      response.headers.forEach((value, key) => {
        if (!dropped.has(key)) out[key] = value;
      });
      return { kind: 'full', status: response.status, headers: out, body: Buffer.concat(chunks) };
    });
  }

  /**
   * Runs the worker's scheduled handler now, as its cron would, through
   * miniflare's own trigger route (a plain request: miniflare's `getWorker()`
   * proxy waits synchronously, and a handler that never returns would stop
   * this whole server with it).
   */
  async scheduled(name: string, cron: string, scheduledMs?: number): Promise<{ outcome: string } | undefined> {
    const instance = await this.instance(name);
    if (!instance) return undefined;
    // The handler's `scheduledTime` is the run's due time, the same whichever node runs it.
    const time = scheduledMs === undefined ? '' : `&time=${scheduledMs}`;
    return this.limited(name, instance, 'scheduled run', async (mf, signal) => {
      const response = await mf.dispatchFetch(`http://localhost${scheduledTrigger}?cron=${encodeURIComponent(cron)}${time}`, { signal });
      return { outcome: await response.text() };
    });
  }

  /** Runs `work` under the time limit and while the instance lives; past the limit the instance is stopped. */
  private async limited<T>(name: string, instance: Instance, what: string, work: (mf: Miniflare, signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    instance.stopped.catch(() => controller.abort());
    return withinLimit(Promise.race([work(instance.mf, controller.signal), instance.stopped]), this.limits.timeoutMs, () => {
      const seconds = this.limits.timeoutMs / 1000;
      const error = new WorkerLimitError(`Worker "${name}" did not finish its ${what} within ${seconds} s; it was stopped and starts afresh on its next use.`, 504);
      instance.kill(error);
      return error;
    });
  }

  /**
   * Starts a worker's workerd. Its top-level code runs here: one that never
   * finishes would leave `ready` unsettled and a core spinning, so it gets the
   * time limit too (at least 10 s, for the process to start on a busy machine).
   */
  private async start(name: string, source: WorkerSource): Promise<Instance> {
    const { Miniflare } = await import('miniflare');
    const mf = new Miniflare({
      modules: true,
      script: source.script,
      bindings: source.bindings,
      compatibilityDate,
      ...(this.outbound && { outboundService: this.outbound.fetch as never }),
    });
    const limitMs = Math.max(this.limits.timeoutMs, 10_000);
    let entry: URL;
    try {
      entry = await withinLimit(mf.ready, limitMs, () => new WorkerLimitError(`the script did not start within ${limitMs / 1000} s (its top-level code must finish)`, 504));
    } catch (error) {
      await mf.dispose().catch(() => {});
      throw error;
    }
    guardWorkerdChildren();
    let reject!: (error: WorkerLimitError) => void;
    const stopped = new Promise<never>((_, fail) => {
      reject = fail;
    });
    stopped.catch(() => {});
    let unwatch = () => {};
    const instance: Instance = {
      mf,
      stopped,
      dead: false,
      kill(error) {
        if (instance.dead) return;
        instance.dead = true;
        unwatch();
        reject(error);
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
      unwatch = this.memory.watch(pid, (bytes) => {
        const mb = (n: number) => Math.round(n / (1 << 20));
        instance.kill(
          new WorkerLimitError(
            `Worker "${name}" went past its memory limit of ${mb(this.limits.memoryBytes)} MB (${mb(bytes)} MB); it was stopped and starts afresh on its next use.`,
            502,
          ),
        );
      });
    }
    return instance;
  }

  async closeAll(): Promise<void> {
    const all = [...this.running.values()];
    this.running.clear();
    await Promise.all(all.map(retire));
    await this.outbound?.close();
  }
}
