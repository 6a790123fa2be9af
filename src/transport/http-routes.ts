// The HTTP binding's routes (seed "HTTP binding" table): each maps a method
// and path under /mp/v0 onto an operation and says where its input comes from.
import type { OperationName } from '../service/operations.ts';

export interface Route {
  readonly method: 'GET' | 'POST';
  /** Segments after /mp/v0; ":name" segments are path parameters. */
  readonly segments: readonly string[];
  readonly operation: OperationName | 'stream' | 'rpc';
  /** Where the input comes from besides the path: the JSON body or the query string. */
  readonly input: 'body' | 'query' | 'none';
}

const route = (method: Route['method'], path: string, operation: Route['operation'], input: Route['input']): Route => ({
  method,
  segments: path.split('/'),
  operation,
  input,
});

export const routes: readonly Route[] = [
  // The base URL the server prints at start answers what discover does.
  { method: 'GET', segments: [], operation: 'monitors/discover', input: 'none' },
  route('GET', 'discover', 'monitors/discover', 'none'),
  route('GET', 'monitors', 'monitors/list', 'none'),
  route('POST', 'monitors', 'monitors/create', 'body'),
  route('GET', 'monitors/:id', 'monitors/get', 'none'),
  route('GET', 'monitors/:id/state', 'monitors/state', 'none'),
  route('POST', 'monitors/:id/observations', 'monitors/publish', 'body'),
  route('POST', 'monitors/:id/update', 'monitors/update', 'body'),
  route('POST', 'monitors/:id/pause', 'monitors/pause', 'body'),
  route('POST', 'monitors/:id/resume', 'monitors/resume', 'body'),
  route('POST', 'monitors/:id/retire', 'monitors/retire', 'body'),
  route('POST', 'subscriptions', 'feeds/subscribe', 'body'),
  route('GET', 'subscriptions/:subscription/pull', 'feeds/pull', 'query'),
  route('GET', 'subscriptions/:subscription/stream', 'stream', 'query'),
  route('POST', 'subscriptions/:subscription/ack', 'feeds/ack', 'body'),
  route('POST', 'subscriptions/:subscription/seek', 'feeds/seek', 'body'),
  route('POST', 'subscriptions/:subscription/renew', 'feeds/renew', 'body'),
  route('POST', 'subscriptions/:subscription/retire', 'feeds/retire', 'body'),
  route('POST', 'subscriptions/:subscription/leases/claim', 'leases/claim', 'body'),
  route('POST', 'subscriptions/:subscription/leases/renew', 'leases/renew', 'body'),
  route('POST', 'subscriptions/:subscription/leases/complete', 'leases/complete', 'body'),
  route('POST', 'subscriptions/:subscription/leases/release', 'leases/release', 'body'),
  route('POST', 'subscriptions/:subscription/leases/reject', 'leases/reject', 'body'),
  route('POST', 'rpc', 'rpc', 'body'),
  route('GET', 'admin/snapshot', 'admin/snapshot', 'none'),
  route('POST', 'admin/compact', 'admin/compact', 'body'),
];

export interface RouteMatch {
  readonly route: Route;
  readonly params: Record<string, string>;
}

/** The route for `segments`, or the methods the path allows when only the method is wrong. */
export function matchRoute(method: string, segments: readonly string[]): RouteMatch | { allowed: string[] } | undefined {
  const allowed: string[] = [];
  for (const candidate of routes) {
    if (candidate.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let matches = true;
    for (let i = 0; i < segments.length && matches; i++) {
      const pattern = candidate.segments[i]!;
      if (pattern.startsWith(':')) params[pattern.slice(1)] = segments[i]!;
      else matches = pattern === segments[i];
    }
    if (!matches) continue;
    if (candidate.method === method) return { route: candidate, params };
    allowed.push(candidate.method);
  }
  return allowed.length > 0 ? { allowed } : undefined;
}
