// Publishes a run's lifecycle to a `recipes` monitor on a Vigil server
// (vigil.yml `server: {base, token, monitor?}`), so a run can be followed
// with `vigil watch`. Publishing never fails a run: the first error is
// reported once and later observations are dropped.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../records/run-record.ts';

export const RUN_TYPE = 'ai.vigil.recipe.run';
export const STEP_TYPE = 'ai.vigil.recipe.step';

interface ServerConfig {
  base: string;
  token?: string;
  monitor?: string;
}

export class ServerPublisher {
  private queue: Promise<void> = Promise.resolve();
  private broken = false;

  private constructor(
    private readonly url: string,
    private readonly ownerToken: string,
    readonly monitorId: string,
    private readonly warn: (line: string) => void,
  ) {}

  static async connect(server: ServerConfig, projectRoot: string, warn: (line: string) => void): Promise<ServerPublisher | null> {
    const base = server.base.replace(/\/+$/, '');
    const cacheFile = join(projectRoot, '.vigil', 'server-monitors.json');
    let cache: Record<string, { id: string; owner_token: string }> = {};
    try {
      cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as typeof cache;
    } catch {
      // first publication from this project
    }
    const wanted = server.monitor ?? `recipes-${createHash('sha256').update(projectRoot).digest('hex').slice(0, 8)}`;
    const key = `${base}#${wanted}`;
    const cached = cache[key];
    try {
      if (cached) {
        // The server may have been restarted without its state: check the monitor is still ours.
        const res = await fetch(`${base}/mp/v0/monitors/${cached.id}`, {
          headers: { authorization: `Bearer ${cached.owner_token}` },
          signal: AbortSignal.timeout(5000),
        });
        await res.body?.cancel();
        if (res.status === 200) return new ServerPublisher(`${base}/mp/v0/monitors/${cached.id}/observations`, cached.owner_token, cached.id, warn);
      }
      for (const id of [wanted, `${wanted}-${Date.now().toString(16).slice(-6)}`]) {
        const res = await fetch(`${base}/mp/v0/monitors`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(server.token ? { authorization: `Bearer ${server.token}` } : {}) },
          body: JSON.stringify({
            id,
            name: 'recipes',
            description: `recipe runs of ${projectRoot}`,
            source: { kind: 'log' },
            types: [RUN_TYPE, STEP_TYPE],
            reason: 'vigil sequence publishes its runs here',
          }),
          signal: AbortSignal.timeout(5000),
        });
        if (res.status === 409) continue;
        const body = (await res.json()) as { owner_token?: string; monitor?: { id: string }; error?: string };
        if (res.status !== 201 || !body.owner_token) throw new Error(`${res.status} ${body.error ?? ''}`.trim());
        cache[key] = { id, owner_token: body.owner_token };
        writeJsonAtomic(cacheFile, cache);
        return new ServerPublisher(`${base}/mp/v0/monitors/${id}/observations`, body.owner_token, id, warn);
      }
      throw new Error(`monitor id ${wanted} is taken`);
    } catch (error) {
      warn(`vigil: cannot publish this run to ${base}: ${(error as Error).message}; the run goes on without it`);
      return null;
    }
  }

  publish(type: string, subject: string, data: Record<string, unknown>): void {
    if (this.broken) return;
    this.queue = this.queue.then(async () => {
      if (this.broken) return;
      try {
        const res = await fetch(this.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${this.ownerToken}` },
          body: JSON.stringify({ type, subject, data }),
          signal: AbortSignal.timeout(5000),
        });
        if (res.status !== 201) throw new Error(`${res.status} ${(await res.text()).slice(0, 200)}`);
      } catch (error) {
        this.broken = true;
        this.warn(`vigil: publishing to the server stopped: ${(error as Error).message}`);
      }
    });
  }

  flush(): Promise<void> {
    return this.queue;
  }
}
