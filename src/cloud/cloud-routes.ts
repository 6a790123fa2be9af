// The /v1 routes of the cloud API. Every route needs an API key, except the
// key administration, which needs the admin token. Errors are protocol.md's
// error model ({code, error, ...} with the code's HTTP status).
import { eventTypes, isEventType } from '../events/channel.ts';
import { invalid, notFound } from '../protocol/errors.ts';
import { requireAdmin } from '../service/access.ts';
import type { MonitorService } from '../service/service.ts';
import { parseJsonBody, parseQuery } from '../transport/http-door.ts';
import type { HttpRequest } from '../transport/http-types.ts';
import { authenticate, createApiKey, listApiKeys } from './api-keys.ts';
import type { CloudRows } from './cloud-rows.ts';
import type { ApiKeyTable } from './cloud-store.ts';
import type { DeliveryQueue } from './delivery-queue.ts';
import { fireTrigger } from './triggers.ts';
import type { Webhooks } from './webhooks.ts';
import type { EventRate } from './webhook-limits.ts';

export interface CloudParts {
  readonly service: MonitorService;
  readonly store: CloudRows;
  readonly webhooks: Webhooks;
  readonly queue: DeliveryQueue;
  /** POST /v1/events per key (webhook-limits.ts). */
  readonly eventRate: EventRate;
}

export interface RouteContext {
  readonly request: HttpRequest;
  readonly params: Record<string, string>;
  readonly key: ApiKeyTable;
  body(): Record<string, unknown>;
  query(): Record<string, unknown>;
}

export type Answer = { status: number; body: unknown };
type RouteHandler = (context: RouteContext) => Answer | Promise<Answer>;

export interface CloudRoute {
  readonly method: string;
  readonly segments: readonly string[];
  readonly auth: 'key' | 'admin';
  readonly handle: RouteHandler;
}

export const cloudRoute = (method: string, path: string, auth: CloudRoute['auth'], handle: RouteHandler): CloudRoute => ({
  method,
  segments: path.split('/'),
  auth,
  handle,
});

export const maxEventDataBytes = 64 * 1024;

const ok = (body: unknown, status = 200): Answer => ({ status, body });

function objectBody(request: HttpRequest): Record<string, unknown> {
  const body = parseJsonBody(request.body);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The request body must be a JSON object.');
  return body as Record<string, unknown>;
}

export function webhookRoutes(parts: CloudParts): CloudRoute[] {
  const { store, webhooks, queue, service, eventRate } = parts;
  return [
    cloudRoute('POST', 'api-keys', 'admin', async (c) => {
      const made = await createApiKey(store, c.body());
      await store.settled();
      return ok(made, 201);
    }),
    cloudRoute('GET', 'api-keys', 'admin', async () => ok({ keys: await listApiKeys(store) })),
    cloudRoute('POST', 'webhooks', 'key', async (c) => {
      const made = await webhooks.register(c.key, c.body());
      await store.settled();
      return ok(made, 201);
    }),
    cloudRoute('GET', 'webhooks', 'key', async (c) => ok(await webhooks.list(c.key))),
    cloudRoute('DELETE', 'webhooks/:id', 'key', async (c) => {
      const result = await webhooks.delete(c.key, c.params.id!);
      await store.settled();
      return ok(result);
    }),
    cloudRoute('POST', 'webhooks/:id/test', 'key', async (c) => ok(await webhooks.test(c.key, c.params.id!))),
    cloudRoute('GET', 'webhooks/:id/deliveries', 'key', async (c) => ok({ deliveries: await webhooks.deliveries(c.key, c.params.id!, c.query().limit) })),
    cloudRoute('POST', 'events', 'key', async (c) => {
      eventRate.take(c.key.id);
      const { type, data, timestamp } = c.body();
      if (!isEventType(type)) throw invalid(`"type" must be one of ${eventTypes.join(', ')}; got ${JSON.stringify(type ?? null)}.`, { field: 'type' });
      if (typeof data !== 'object' || data === null || Array.isArray(data)) throw invalid('"data" must be a JSON object.', { field: 'data' });
      if (timestamp !== undefined && (typeof timestamp !== 'string' || Number.isNaN(Date.parse(timestamp)))) {
        throw invalid('"timestamp" must be an ISO 8601 time.', { field: 'timestamp' });
      }
      // Stored once and sent to every registration: the cap bounds what one request makes the server send.
      if (Buffer.byteLength(JSON.stringify(data)) > maxEventDataBytes) {
        throw invalid(`"data" is larger than ${maxEventDataBytes / 1024} KiB once serialised; send a reference instead of the content.`, { field: 'data' });
      }
      const event = { type, data: data as Record<string, unknown>, timestamp: (timestamp as string | undefined) ?? new Date().toISOString() };
      return ok(await queue.fanOut(c.key.id, event), 202);
    }),
    cloudRoute('POST', 'triggers/:monitor', 'key', async (c) => ok(await fireTrigger(service, c.key, c.params.monitor!, parseJsonBody(c.request.body)), 201)),
  ];
}

type Matched = { route: CloudRoute; params: Record<string, string> } | { allowed: string[] } | undefined;

function match(routes: readonly CloudRoute[], method: string, segments: string[]): Matched {
  const allowed: string[] = [];
  for (const route of routes) {
    if (route.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let same = true;
    for (let i = 0; i < segments.length && same; i++) {
      const pattern = route.segments[i]!;
      if (pattern.startsWith(':')) params[pattern.slice(1)] = segments[i]!;
      else same = pattern === segments[i];
    }
    if (!same) continue;
    if (route.method === method) return { route, params };
    allowed.push(route.method);
  }
  return allowed.length > 0 ? { allowed } : undefined;
}

/** Answers one request under /v1 (the path without the /v1 prefix is `rest`). */
export async function answerCloud(
  parts: CloudParts,
  routes: readonly CloudRoute[],
  request: HttpRequest,
  bearer: string | undefined,
  rest: string,
): Promise<Answer> {
  let segments: string[];
  try {
    segments = rest.split('/').filter((s) => s.length > 0).map((s) => decodeURIComponent(s));
  } catch {
    throw invalid('The request path is not valid percent-encoded text.');
  }
  const found = match(routes, request.method, segments);
  if (!found) throw notFound(`No route ${request.method} /v1/${segments.join('/')}.`);
  if ('allowed' in found) throw notFound(`/v1/${segments.join('/')} does not answer ${request.method}; it answers ${found.allowed.join(', ')}.`);
  let key: ApiKeyTable;
  if (found.route.auth === 'admin') {
    requireAdmin(parts.service, { bearer });
    key = { id: 'admin', name: 'admin', hash: '', created_at: '', revoked_at: null, monitors: '[]' };
  } else key = await authenticate(parts.store, bearer);
  return found.route.handle({
    request,
    params: found.params,
    key,
    body: () => objectBody(request),
    query: () => parseQuery(request.query),
  });
}
