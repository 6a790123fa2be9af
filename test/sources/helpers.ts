// Shared by the live-source tests: an in-process server with fast backoff,
// and reading what a source wrote through the API, as a user would.
import { type RunningServer, startServer } from '../../src/server.ts';
import { call, createMonitor, subscribe } from '../support/client.ts';
import { scaled } from '../support/time-scale.ts';

export interface SourceServer {
  server: RunningServer;
  base: string;
  close(): Promise<void>;
}

export async function sourceServer(options: { kinds: string[]; root?: string; allowShell?: boolean; allowAdmin?: boolean | string; state?: string }): Promise<SourceServer> {
  const server = await startServer({
    port: 0,
    cloud: false,
    state: options.state,
    allowAdmin: options.allowAdmin,
    sources: { kinds: options.kinds, root: options.root, allowShell: options.allowShell, minBackoffMs: 200, maxBackoffMs: 1000 },
    log: () => undefined,
  });
  return { server, base: `${server.url}/mp/v0`, close: () => server.close() };
}

export interface Watched {
  id: string;
  ownerToken: string;
  /** Every observation the source wrote so far (origin system, actor source:<kind>). */
  written(): Promise<any[]>;
  state(): Promise<any>;
}

export async function watchedMonitor(base: string, source: Record<string, unknown>, token?: string, extra: Record<string, unknown> = {}): Promise<Watched> {
  const reply = await call(base, 'POST', '/monitors', { body: { ...extra, source }, token });
  if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  const id = reply.body.monitor.id as string;
  const ownerToken = reply.body.owner_token as string;
  const sub = await subscribe(base, { monitor: id, subscriber: 'agent:test', from: 'earliest' }, ownerToken);
  return {
    id,
    ownerToken,
    async written() {
      const page = await call(base, 'GET', `/subscriptions/${sub.id}/pull?limit=1000&cursor=1`, { token: sub.token });
      if (page.status !== 200) throw new Error(`pull failed: ${page.status} ${JSON.stringify(page.body)}`);
      return page.body.observations.filter((o: any) => String(o.actor).startsWith('source:'));
    },
    async state() {
      return (await call(base, 'GET', `/monitors/${id}/state`, { token: ownerToken })).body;
    },
  };
}

/** Polls until `check` returns a value (not undefined); fails with the last seen value after `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> {
  const until = Date.now() + scaled(ms);
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((d) => setTimeout(d, 150));
  }
}

/** Waits until the monitor's source has read what is there and said so (its first contact): a change made after this is new to it. */
export function sourceStarted(watched: Watched): Promise<true> {
  return eventually(async () => ((await watched.state()).ages.since_last_source_contact_s !== null ? true : undefined), 'the source to start');
}

/** Waits until at least `n` observations were written and returns them. */
export function writtenAtLeast(watched: Watched, n: number, what = `${n} observations`): Promise<any[]> {
  return eventually(async () => {
    const all = await watched.written();
    return all.length >= n ? all : undefined;
  }, what);
}

export { call, createMonitor };
