// One miniflare (workerd) instance per deployed worker, started on first use
// and replaced when its script or bindings change. Requests are handed over
// with dispatchFetch and the answer relayed to the client as it comes
// (worker-answer.ts). On a cluster, where another node may change or delete
// the worker, each use first reads the row's version: a running instance of
// another version is replaced by the row's before the use, and a deleted
// worker is stopped.
//
// A worker's code is anyone's with an API key: a request or scheduled run
// that takes longer than the time limit is abandoned and the worker's
// workerd is restarted (a spinning isolate would otherwise hold a core and
// every later request for good), a workerd past the memory limit is stopped
// the same way (worker-memory.ts), an answer is relayed up to a size limit,
// the worker's own fetches go out under the inward-address rules
// (worker-outbound.ts), and how many runtimes run at once is bounded per key,
// per server and in memory, idle ones being stopped (runtime-bounds.ts).
import type { Miniflare } from 'miniflare';
import type { HttpRequest, StreamSink } from '../../transport/http-types.ts';
import { defaultRuntimeCaps, makeRoom, overBounds, type RuntimeCaps, type RuntimeUse, startingRuntimeBytes } from './runtime-bounds.ts';
import { type BodyReader, type RelayEnd, relayBody } from './worker-answer.ts';
import { type Instance, lateError, runLimited, startInstance, WorkerLimitError, type WorkerSource } from './worker-instance.ts';
import { MemoryWatch } from './worker-memory.ts';
import { WorkerOutbound } from './worker-outbound.ts';

export { compatibilityDate, WorkerLimitError, type WorkerSource } from './worker-instance.ts';
export { isReservedEdgePath } from './edge-paths.ts';

/** A started instance not yet serving: installed once its row is stored, or discarded. */
export interface PreparedWorker {
  install(): Promise<void>;
  discard(): Promise<void>;
}

/** Miniflare answers this path itself (it runs the scheduled handler); no request from outside may reach it. */
const scheduledTrigger = '/cdn-cgi/mf/scheduled';
export interface WorkerLimits {
  /** A request (answer and body) or a scheduled run, in ms. */
  readonly timeoutMs: number;
  /** The least time a worker's top-level code gets to finish at its start, in ms (the start gets timeoutMs if longer). */
  readonly startMs: number;
  readonly maxResponseBytes: number;
  /** Resident memory of a worker's workerd process. */
  readonly memoryBytes: number;
  /** The worker's fetches may reach loopback, private and link-local addresses (--allow-private-workers). */
  readonly allowPrivate: boolean;
  /** How many runtimes run at once, and for how long idle. */
  readonly runtimes: RuntimeCaps;
}

export const defaultWorkerLimits: WorkerLimits = {
  timeoutMs: 30_000,
  // Time for workerd to start on a busy machine.
  startMs: 10_000,
  maxResponseBytes: 32 << 20,
  memoryBytes: 256 << 20,
  allowPrivate: false,
  runtimes: defaultRuntimeCaps,
};

// Hop-by-hop and framing headers are the transport's business; the body is already decoded.
const dropped = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'content-encoding']);

/** A worker's answer: its head at once, its body relayed to the client (or dropped) exactly once. */
export interface WorkerAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** No body to relay (none was sent, or the request was HEAD). */
  readonly empty: boolean;
  relay(sink: StreamSink): Promise<RelayEnd>;
  /** Drops the body unread (a HEAD request, a client gone before the relay started). */
  discard(): void;
}

interface Running {
  readonly version: string | undefined;
  readonly keyId: string;
  readonly instance: Promise<Instance>;
  /** The instance once started (its memory and whether it died are read from it). */
  started?: Instance;
  /** Requests and scheduled runs in progress. */
  busy: number;
  lastUsedMs: number;
}

const retire = (entry: Running | undefined) => entry?.instance.then((old) => old.retire()).catch(() => {});

export class WorkerRuntimes {
  private readonly running = new Map<string, Running>();
  private readonly memory: MemoryWatch;
  private readonly outbound: WorkerOutbound | undefined;
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(
    private readonly load: (name: string) => Promise<WorkerSource | undefined>,
    private readonly limits: WorkerLimits = defaultWorkerLimits,
    /** The stored version of a worker, read before each use when other nodes may change it (a cluster). */
    private readonly versionOf?: (name: string) => Promise<string | undefined>,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.memory = new MemoryWatch(limits.memoryBytes, () => this.sweep());
    this.outbound = limits.allowPrivate ? undefined : new WorkerOutbound(limits.timeoutMs);
    this.sweeper = setInterval(() => this.sweep(), Math.min(30_000, Math.max(250, limits.runtimes.idleMs / 4)));
    this.sweeper.unref();
  }

  /** The runtimes running now, by name (tests and the admin's view). */
  runningNames(): string[] {
    return [...this.running].filter(([, r]) => !r.started?.dead).map(([name]) => name);
  }

  private uses(except?: string): RuntimeUse[] {
    const uses: RuntimeUse[] = [];
    for (const [name, r] of this.running) {
      if (name === except || r.started?.dead) continue;
      const residentBytes = r.started?.residentBytes || startingRuntimeBytes;
      uses.push({ name, keyId: r.keyId, busy: r.busy, lastUsedMs: r.lastUsedMs, residentBytes });
    }
    return uses;
  }

  /** Stops idle runtimes, and the least recently used idle ones while all together pass the memory budget. */
  private sweep(): void {
    for (const name of overBounds(this.uses(), Date.now(), this.limits.runtimes)) {
      this.log(`edge worker ${name}: its runtime was stopped (idle, or the edge's memory budget is spent); it starts again on its next use`);
      void this.stop(name);
    }
  }

  /**
   * Stops idle runtimes so that one more of `keyId` may start (other than `name`'s own), or refuses with 503.
   * The runtimes stopped leave the table in this turn, so the caller counts at once when it registers its own.
   */
  private makeRoom(name: string, keyId: string): Promise<unknown> {
    const room = makeRoom(this.uses(name), keyId, this.limits.runtimes);
    if ('refused' in room) throw new WorkerLimitError(`Worker "${name}" cannot start now: ${room.refused}; try again shortly.`, 503);
    return Promise.all(room.stop.map((victim) => this.stop(victim)));
  }

  private start(name: string, source: WorkerSource): Promise<Instance> {
    return startInstance(name, source, { timeoutMs: this.limits.timeoutMs, startMs: this.limits.startMs, memoryLimitBytes: this.limits.memoryBytes, memory: this.memory, outbound: this.outbound });
  }

  private entry(source: WorkerSource, instance: Promise<Instance>): Running {
    const entry: Running = { version: source.version, keyId: source.keyId ?? '', instance, busy: 0, lastUsedMs: Date.now() };
    instance.then(
      (started) => {
        entry.started = started;
      },
      () => {},
    );
    return entry;
  }

  /**
   * Starts the worker from `source`, checking that it starts; it serves once installed (after its row is
   * stored), so a script that fails to start leaves the deployed one running.
   */
  async prepare(name: string, source: WorkerSource): Promise<PreparedWorker> {
    await this.makeRoom(name, source.keyId ?? '');
    const instance = await this.start(name, source);
    return {
      install: async () => {
        const previous = this.running.get(name);
        this.running.set(name, this.entry(source, Promise.resolve(instance)));
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

  /** The worker's live entry, started when there is none (or it was stopped, or is stale); undefined when not deployed. */
  private async live(name: string): Promise<{ entry: Running; instance: Instance } | undefined> {
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
      const instance = await current.instance.catch(() => undefined);
      if (instance && !instance.dead) return { entry: current, instance };
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
      const instance = await now.instance.catch(() => undefined);
      if (instance && !instance.dead) return { entry: now, instance };
    }
    const room = this.makeRoom(name, source.keyId ?? '');
    const previous = this.running.get(name);
    const started = room.then(() => this.start(name, source));
    const entry = this.entry(source, started);
    this.running.set(name, entry);
    // The stale instance goes once its successor is up (or failed: it is stale either way).
    void started.then(
      () => retire(previous),
      () => {
        if (this.running.get(name) === entry) this.running.delete(name);
        return retire(previous);
      },
    );
    return { entry, instance: await started };
  }

  /** Counts a use of the runtime until the returned function is called (once). */
  private hold(entry: Running): () => void {
    entry.busy++;
    entry.lastUsedMs = Date.now();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      entry.busy--;
      entry.lastUsedMs = Date.now();
    };
  }

  /** Answers `request` with the worker, or undefined when no such worker is deployed. */
  async fetch(name: string, path: string, request: HttpRequest): Promise<WorkerAnswer | undefined> {
    const live = await this.live(name);
    if (!live) return undefined;
    const { instance } = live;
    const release = this.hold(live.entry);
    const deadlineMs = Date.now() + this.limits.timeoutMs;
    const host = request.headers.host ?? 'localhost';
    const url = `http://${host}${path}${request.query ? `?${request.query}` : ''}`;
    const headers = Object.entries(request.headers).filter(([k]) => !dropped.has(k));
    // Without it undici asks workerd for gzip, which holds small chunks back until it has more (and costs a core on loopback).
    if (request.headers['accept-encoding'] === undefined) headers.push(['accept-encoding', 'identity']);
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    let response: Awaited<ReturnType<Miniflare['dispatchFetch']>>;
    try {
      response = await runLimited(name, instance, 'request', this.limits.timeoutMs, (mf, signal) =>
        mf.dispatchFetch(url, { method: request.method, headers, body: hasBody ? request.body : undefined, signal }),
      );
    } catch (error) {
      release();
      throw error;
    }
    const body = response.body as unknown as { getReader(): BodyReader; cancel(): Promise<void> } | null;
    const discard = () => {
      body?.cancel().catch(() => undefined);
      release();
    };
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > this.limits.maxResponseBytes) {
      discard();
      throw new WorkerLimitError(`Worker "${name}" answered ${declared} bytes, more than the edge relays (${this.limits.maxResponseBytes}); the answer was dropped.`, 502);
    }
    const out: Record<string, string> = {};
    response.headers.forEach((value, key) => {
      if (!dropped.has(key)) out[key] = value;
    });
    return {
      status: response.status,
      headers: out,
      empty: body === null || request.method === 'HEAD',
      discard,
      relay: async (sink) => {
        if (!body) {
          sink.end();
          release();
          return { kind: 'sent', bytes: 0 };
        }
        const end = await relayBody(body.getReader(), sink, { maxBytes: this.limits.maxResponseBytes, deadlineMs, onStopped: instance.onStopped });
        release();
        if (end.kind === 'worker-late') instance.kill(lateError(name, 'request', this.limits.timeoutMs));
        return end;
      },
    };
  }

  /**
   * Runs the worker's scheduled handler now, as its cron would, through
   * miniflare's own trigger route (a plain request: miniflare's `getWorker()`
   * proxy waits synchronously, and a handler that never returns would stop
   * this whole server with it).
   */
  async scheduled(name: string, cron: string, scheduledMs?: number): Promise<{ outcome: string } | undefined> {
    const live = await this.live(name);
    if (!live) return undefined;
    const release = this.hold(live.entry);
    // The handler's `scheduledTime` is the run's due time, the same whichever node runs it.
    const time = scheduledMs === undefined ? '' : `&time=${scheduledMs}`;
    try {
      return await runLimited(name, live.instance, 'scheduled run', this.limits.timeoutMs, async (mf, signal) => {
        const response = await mf.dispatchFetch(`http://localhost${scheduledTrigger}?cron=${encodeURIComponent(cron)}${time}`, { signal });
        return { outcome: await response.text() };
      });
    } finally {
      release();
    }
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.running.values()];
    this.running.clear();
    await Promise.all(all.map(retire));
    await this.outbound?.close();
  }
}
