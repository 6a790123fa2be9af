// One miniflare (workerd) instance per deployed worker, started on first use
// and replaced when its script or bindings change. Requests are handed over
// with dispatchFetch and the answer turned back into a plain reply.
import type { Miniflare } from 'miniflare';
import type { FullResponse, HttpRequest } from '../../transport/http-types.ts';
import { guardWorkerdChildren } from './workerd-guard.ts';

export interface WorkerSource {
  script: string;
  bindings: Record<string, string>;
}

export const compatibilityDate = '2024-09-23';

// Hop-by-hop and framing headers are the transport's business; the body is already decoded.
const dropped = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'content-encoding']);

export class WorkerRuntimes {
  private readonly running = new Map<string, Promise<Miniflare>>();

  constructor(private readonly load: (name: string) => WorkerSource | undefined) {}

  /** Starts the worker from `source` (checking that it starts), replacing a running one. */
  async replace(name: string, source: WorkerSource): Promise<void> {
    const started = start(source);
    // Awaited before the old instance goes, so a script that fails to start leaves the deployed one running.
    await started;
    const previous = this.running.get(name);
    this.running.set(name, started);
    if (previous) await previous.then((mf) => mf.dispose()).catch(() => {});
  }

  async stop(name: string): Promise<void> {
    const previous = this.running.get(name);
    this.running.delete(name);
    if (previous) await previous.then((mf) => mf.dispose()).catch(() => {});
  }

  private instance(name: string): Promise<Miniflare> | undefined {
    let instance = this.running.get(name);
    if (!instance) {
      const source = this.load(name);
      if (!source) return undefined;
      instance = start(source);
      this.running.set(name, instance);
      instance.catch(() => this.running.delete(name));
    }
    return instance;
  }

  /** Answers `request` with the worker, or undefined when no such worker is deployed. */
  async fetch(name: string, path: string, request: HttpRequest): Promise<FullResponse | undefined> {
    const mf = await this.instance(name);
    if (!mf) return undefined;
    const host = request.headers.host ?? 'localhost';
    const url = `http://${host}${path}${request.query ? `?${request.query}` : ''}`;
    const headers = Object.entries(request.headers).filter(([k]) => !dropped.has(k));
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    const response = await mf.dispatchFetch(url, {
      method: request.method,
      headers,
      body: hasBody ? request.body : undefined,
    });
    const body = Buffer.from(await response.arrayBuffer());
    const out: Record<string, string> = {};
    response.headers.forEach((value, key) => {
      if (!dropped.has(key)) out[key] = value;
    });
    return { kind: 'full', status: response.status, headers: out, body };
  }

  /** Runs the worker's scheduled handler now, as its cron would. */
  async scheduled(name: string, cron: string): Promise<{ outcome: string } | undefined> {
    const mf = await this.instance(name);
    if (!mf) return undefined;
    // miniflare's Fetcher type leaves out scheduled(), which workerd's fetcher has.
    const worker = (await mf.getWorker()) as unknown as { scheduled(o: { cron: string; scheduledTime: Date }): Promise<{ outcome: string }> };
    const result = await worker.scheduled({ cron, scheduledTime: new Date() });
    return { outcome: result.outcome };
  }

  async closeAll(): Promise<void> {
    const all = [...this.running.values()];
    this.running.clear();
    await Promise.all(all.map((p) => p.then((mf) => mf.dispose()).catch(() => {})));
  }
}

async function start(source: WorkerSource): Promise<Miniflare> {
  const { Miniflare } = await import('miniflare');
  const mf = new Miniflare({ modules: true, script: source.script, bindings: source.bindings, compatibilityDate });
  try {
    await mf.ready;
  } catch (error) {
    await mf.dispose().catch(() => {});
    throw error;
  }
  guardWorkerdChildren();
  return mf;
}
