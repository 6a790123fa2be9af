// Protocol calls the scenarios use to set a server up (not measured).
import { json, type Requester } from './http.ts';

export interface Sub {
  readonly id: string;
  readonly token: string;
}

export async function createMonitor(request: Requester, id: string, capabilities: string[] = ['observe']): Promise<string> {
  const reply = await json<{ owner_token: string }>(request, 'POST', '/monitors', { id, capabilities, default_grant: ['observe'] });
  return reply.owner_token;
}

export async function subscribe(
  request: Requester,
  monitor: string,
  owner: string,
  subscriber: string,
  options: { from?: 'head' | 'earliest'; capabilities?: string[] } = {},
): Promise<Sub> {
  const reply = await json<{ subscription: { id: string }; token: string }>(
    request,
    'POST',
    '/subscriptions',
    { monitor, subscriber, from: options.from ?? 'head', capabilities: options.capabilities ?? ['observe'] },
    owner,
  );
  return { id: reply.subscription.id, token: reply.token };
}

/** Creates `count` subscriptions with `parallel` requests in flight. */
export async function subscribeMany(request: Requester, monitor: string, owner: string, count: number, parallel = 16, prefix = 'agent:bench'): Promise<Sub[]> {
  const subs: Sub[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        subs[i] = await subscribe(request, monitor, owner, `${prefix}-${i}`);
      }
    }),
  );
  return subs;
}

/** Publishes `count` observations in batches of 1000 (subjects s0..s99). */
export async function fill(request: Requester, monitor: string, owner: string, count: number, parallel = 4): Promise<void> {
  let left = count;
  let n = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (left > 0) {
        const size = Math.min(1000, left);
        left -= size;
        const observations = Array.from({ length: size }, () => {
          n++;
          return { type: 'bench.fill', subject: `s${n % 100}`, data: { n } };
        });
        await json(request, 'POST', `/monitors/${monitor}/observations`, { observations }, owner);
      }
    }),
  );
}

export async function head(request: Requester, monitor: string, owner: string): Promise<number> {
  const reply = await json<{ head: number; monitor?: { head: number } }>(request, 'GET', `/monitors/${monitor}`, undefined, owner);
  return reply.monitor?.head ?? reply.head;
}
