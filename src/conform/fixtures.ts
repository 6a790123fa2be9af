// Building blocks the checks share: each creates what it needs with unique
// ids over the wire, so checks can run in parallel against one server.
import type { CheckContext } from './check.ts';
import { accepted, equal, ensure } from './expect.ts';
import type { Wire } from './wire-client.ts';

export interface MonitorHandle {
  readonly id: string;
  readonly token: string;
  readonly monitor: Wire;
  readonly subscribeToken?: string;
}

export interface SubscriptionHandle {
  readonly id: string;
  readonly token: string;
  readonly subscription: Wire;
}

/** A bookkeeping or reserved observation type of the server's vendor, e.g. `ai.vigil.monitor.lease`. */
export const vendorType = (ctx: CheckContext, name: string) => `${ctx.vendor}.monitor.${name}`;

/**
 * The actor of what the server's own timers write (lease expiry, mute
 * retirement): Vigil's is `system:vigil`; the base protocol leaves the name to
 * the vendor, so another vendor's is any `system:` principal.
 */
export function expectSystemActor(ctx: CheckContext, actor: unknown, what: string): void {
  if (ctx.vendor === 'ai.vigil') equal(actor, 'system:vigil', what);
  else ensure(typeof actor === 'string' && /^system:\S+$/.test(actor), `${what}: expected a system: principal, got ${JSON.stringify(actor)}`);
}

export async function createMonitor(ctx: CheckContext, body: Record<string, unknown> = {}): Promise<MonitorHandle> {
  const id = (body.id as string | undefined) ?? ctx.unique('cf');
  const reply = await ctx.http.post('/monitors', { id, types: ['conform.event', 'conform.other'], ...body });
  const created = accepted(reply, 201, 'creating a fixture monitor');
  ensure(typeof created?.owner_token === 'string', `create reply lacks owner_token: ${reply.text.slice(0, 200)}`);
  return { id, token: created.owner_token, monitor: created.monitor, subscribeToken: created.subscribe_token };
}

export async function publish(ctx: CheckContext, m: MonitorHandle, observation: Record<string, unknown>): Promise<number> {
  const reply = await ctx.http.post(`/monitors/${m.id}/observations`, observation, m.token);
  const body = accepted(reply, 201, `publishing ${JSON.stringify(observation).slice(0, 80)}`);
  ensure(Number.isSafeInteger(body?.seq), `publish reply lacks seq: ${reply.text.slice(0, 200)}`);
  return body.seq;
}

export async function subscribe(
  ctx: CheckContext,
  m: MonitorHandle,
  body: Record<string, unknown> = {},
  token: string | undefined = m.token,
): Promise<SubscriptionHandle> {
  const reply = await ctx.http.post('/subscriptions', { monitor: m.id, subscriber: ctx.unique('agent:sub'), ...body }, token);
  const created = accepted(reply, 201, 'subscribing');
  return { id: created.subscription.id, token: created.token, subscription: created.subscription };
}

export async function pull(ctx: CheckContext, s: SubscriptionHandle, query: Record<string, string | number> = {}): Promise<Wire> {
  const reply = await ctx.http.get(`/subscriptions/${s.id}/pull`, { token: s.token, query });
  return accepted(reply, 200, 'pulling');
}

/** Every observation of the monitor from the start, through a fresh unfiltered subscription. */
export async function readFeed(ctx: CheckContext, m: MonitorHandle): Promise<Wire[]> {
  const reader = await subscribe(ctx, m, { subscriber: ctx.unique('agent:reader') });
  const page = await pull(ctx, reader, { limit: 1000 });
  return page.observations;
}

/** Polls `read` until `done` holds or `ms` pass; returns the last value read. */
export async function eventually<T>(ms: number, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
