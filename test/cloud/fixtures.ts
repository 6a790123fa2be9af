// An in-process server with the cloud API, an admin token and API keys.
import { afterAll, beforeAll } from 'vitest';
import type { DeliveryTimers } from '../../src/cloud/delivery-queue.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { call } from '../support/client.ts';

export const adminToken = 'admin-token-for-cloud-tests';

/** Timers on a virtual clock that jumps ahead when one fires: they run at once and remember the delays asked for. */
export function immediateTimers(): DeliveryTimers & { delays: number[] } {
  const delays: number[] = [];
  let virtual = Date.now();
  return {
    delays,
    now: () => virtual,
    after(ms, run) {
      delays.push(ms);
      const timer = setTimeout(() => {
        virtual += ms;
        run();
      }, 0);
      return () => clearTimeout(timer);
    },
  };
}

/** A new API key; `monitors` is its trigger scope (none unless given). */
export async function makeKey(url: string, name = 'test', monitors?: string[] | '*'): Promise<string> {
  const made = await call(url, 'POST', '/v1/api-keys', { token: adminToken, body: { name, monitors } });
  if (made.status !== 201) throw new Error(`api-key create failed: ${made.status} ${JSON.stringify(made.body)}`);
  return made.body.key;
}

export function useCloudServer(options: Parameters<typeof startServer>[0] = {}) {
  const ref = { url: '', server: undefined as unknown as RunningServer };
  beforeAll(async () => {
    ref.server = await startServer({ port: 0, transport: 'node', allowAdmin: adminToken, ...options });
    ref.url = ref.server.url;
  });
  afterAll(async () => {
    await ref.server?.close();
  });
  return ref;
}
