// The HTTP door: turns a plain request into an operation call and the result
// into a reply. No business rules live here; it only parses, routes, applies
// the browser rules (§13) and serialises.
import { ProtocolError, asProtocolError, invalid, notFound } from '../protocol/errors.ts';
import { stringifyReply } from '../protocol/raw-json.ts';
import type { Caller } from '../service/access.ts';
import { invoke } from '../service/operations.ts';
import type { Reply } from '../service/reply.ts';
import type { MonitorService } from '../service/service.ts';
import { browserGuard, type BrowserPolicy } from './browser-guard.ts';
import type { FullResponse, HttpHandler, HttpRequest, HttpResponse, RefusedBody } from './http-types.ts';
import { idFromHead } from './rpc-head.ts';
import { matchRoute } from './http-routes.ts';
import { RequestCaller, RequestInvoke } from './request-caller.ts';

export const basePath = '/mp/v0';

export interface DoorExtensions {
  /** Serves GET /subscriptions/<id>/stream (the SSE door). */
  readonly stream?: (request: HttpRequest, subscription: string, caller: Caller, query: Record<string, unknown>) => HttpResponse | Promise<HttpResponse>;
  /** Serves POST /rpc (the JSON-RPC door). */
  readonly rpc?: (request: HttpRequest, caller: Caller) => Promise<FullResponse>;
  /** Paths outside /mp/v0 another module answers after the browser rules (the cloud API's /v1); undefined: not its path. */
  readonly mount?: (request: HttpRequest) => Promise<HttpResponse> | undefined;
}

/** The headers of a JSON reply with no others: shared by every such reply, so nothing may change them. */
const jsonHeaders: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/json; charset=utf-8' });

function hasKeys(headers: Record<string, string>): boolean {
  for (const _ in headers) return true;
  return false;
}

export function jsonResponse(status: number, body: unknown, headers?: Record<string, string>): FullResponse {
  return {
    kind: 'full',
    status,
    headers: headers === undefined || !hasKeys(headers) ? jsonHeaders : { ...jsonHeaders, ...headers },
    body: stringifyReply(body),
  };
}

/** Seconds a client is told to wait before trying again after 503 STORE_UNAVAILABLE. */
const storeRetrySeconds = '1';

export function errorResponse(error: ProtocolError, headers: Record<string, string> = {}): FullResponse {
  if (error.code === 'STORE_UNAVAILABLE') return jsonResponse(error.status, error.toBody(), { ...headers, 'retry-after': storeRetrySeconds });
  return jsonResponse(error.status, error.toBody(), headers);
}

export function tooLargeResponse(limitBytes: number, refused?: RefusedBody): FullResponse {
  const error = new ProtocolError('TOO_LARGE', `The request body is larger than this server accepts (${limitBytes} bytes; see --max-body).`, {
    limit_bytes: limitBytes,
  });
  if (refused?.path === `${basePath}/rpc`) {
    // A JSON-RPC client matches replies by id: keep the call's when its first bytes hold it.
    return jsonResponse(error.status, { jsonrpc: '2.0', id: idFromHead(refused.head), error: { code: error.rpcCode, message: error.message, data: error.toBody() } });
  }
  return errorResponse(error);
}

export function bearerOf(request: HttpRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads a JSON request body: empty means {}, anything unreadable is a clear 400. */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return {};
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    throw invalid('The request body is not valid UTF-8 text.');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    // Only whitespace is not a JSON text, and means the same as no body.
    if (text.trim() === '') return {};
    throw invalid(`The request body is not valid JSON: ${(error as Error).message}.`);
  }
}

/** Query parameters as an object; a repeated key becomes a list. */
export function parseQuery(query: string): Record<string, unknown> {
  // No prototype: "?__proto__=1" must arrive as a key (and be refused), not vanish into the prototype chain.
  const out: Record<string, unknown> = Object.create(null);
  if (!query) return out;
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(query);
  } catch {
    throw invalid('The query string cannot be read.');
  }
  for (const [key, value] of params) {
    const previous = out[key];
    if (previous === undefined) out[key] = value;
    else out[key] = Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return out;
}

function decodeSegments(path: string): string[] {
  try {
    return path
      .split('/')
      .filter((s) => s.length > 0)
      .map((s) => decodeURIComponent(s));
  } catch {
    throw invalid('The request path is not valid percent-encoded text.');
  }
}

// Clients repeat the same few paths (their monitor's observations, their
// subscription's leases): decoding and matching a path is done once per path.
const routeCacheLimit = 1024;
const routeCache = new Map<string, ReturnType<typeof matchRoute>>();

function routeOf(method: string, path: string): ReturnType<typeof matchRoute> {
  const key = `${method} ${path}`;
  if (routeCache.has(key)) return routeCache.get(key);
  const match = matchRoute(method, decodeSegments(path.slice(basePath.length)));
  // Shared by every request on this path: nothing may change it.
  if (match && 'params' in match) Object.freeze(match.params);
  if (routeCache.size >= routeCacheLimit) routeCache.delete(routeCache.keys().next().value!);
  routeCache.set(key, match);
  return match;
}

function mergeInput(params: Record<string, string>, extra: unknown): Record<string, unknown> {
  if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) {
    throw invalid(`The request body must be a JSON object; got ${Array.isArray(extra) ? 'an array' : JSON.stringify(extra)}.`);
  }
  for (const name of Object.keys(params)) {
    if (name in (extra as Record<string, unknown>)) {
      throw invalid(`"${name}" is taken from the path; leave it out of the request.`, { field: name });
    }
  }
  return { ...(extra as Record<string, unknown>), ...params };
}

/** Routes without filters take no query parameters: a key there is a mistake, not something to ignore. */
function refuseQuery(request: HttpRequest): void {
  const keys = Object.keys(parseQuery(request.query));
  if (keys.length === 0) return;
  throw invalid(`${request.method} ${request.path} takes no query parameters; got ${keys.slice(0, 10).map((k) => `"${k}"`).join(', ')}.`, {
    invalid: keys.slice(0, 10),
    known_keys: [],
  });
}

export interface HttpDoorOptions extends BrowserPolicy {
  readonly extensions?: DoorExtensions;
}

export function createHttpHandler(service: MonitorService, options: HttpDoorOptions): HttpHandler {
  const guard = browserGuard(options);
  const extensions = options.extensions ?? {};

  return async (request) => {
    const verdict = guard(request);
    if (verdict.kind === 'refused') return errorResponse(verdict.error);
    if (verdict.kind === 'preflight') return verdict.response;
    const cors = verdict.headers;
    try {
      return await route(request, cors);
    } catch (thrown) {
      return errorResponse(asProtocolError(thrown, `${request.method} ${request.path}`), cors);
    }
  };

  async function route(request: HttpRequest, cors: Record<string, string>): Promise<HttpResponse> {
    const mounted = extensions.mount?.(request);
    if (mounted) {
      const response = await mounted;
      return { ...response, headers: { ...response.headers, ...cors } };
    }
    if (!request.path.startsWith(`${basePath}/`) && request.path !== basePath) {
      throw notFound(`No route ${request.method} ${request.path}; the API lives under ${basePath}.`);
    }
    const match = routeOf(request.method, request.path);
    if (!match) throw notFound(`No route ${request.method} ${request.path}.`);
    if ('allowed' in match) {
      throw notFound(`${request.path} does not answer ${request.method}; it answers ${match.allowed.join(', ')}.`);
    }
    const caller: Caller = new RequestCaller(bearerOf(request), request);
    const { route: matched, params } = match;
    if (matched.input !== 'query') refuseQuery(request);
    if (matched.operation === 'rpc') {
      if (!extensions.rpc) throw notFound('JSON-RPC is not served here.');
      const response = await extensions.rpc(request, caller);
      return { ...response, headers: { ...response.headers, ...cors } };
    }
    const extra = matched.input === 'body' ? parseJsonBody(request.body) : matched.input === 'query' ? parseQuery(request.query) : {};
    const input = mergeInput(params, extra);
    if (matched.operation === 'stream') {
      if (!extensions.stream) throw notFound('Server-sent events are not served here.');
      const { subscription, ...query } = input;
      const response = await extensions.stream(request, String(subscription), caller, query);
      return { ...response, headers: { ...response.headers, ...cors } };
    }
    const raw = () => (matched.input === 'body' ? parseJsonBody(request.body) : extra);
    const reply: Reply = await invoke(service, matched.operation, input, new RequestInvoke(caller, request, raw, matched.input === 'query'));
    return jsonResponse(reply.status, reply.body, cors);
  }
}
