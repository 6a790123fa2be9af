// Browser rules (§13): a request from a web origin that is not allowed is
// refused, and on loopback connections the Host header must name this
// machine, which defeats DNS rebinding. Allowed origins get CORS answers.
// The sets are built once; the per-request function only reads.
import { ProtocolError } from '../protocol/errors.ts';
import { isLoopback } from '../service/loopback.ts';
import type { FullResponse, HttpRequest } from './http-types.ts';

export interface BrowserPolicy {
  /** Origins (scheme://host[:port]) allowed to call; "*" allows any. */
  readonly allowOrigins: readonly string[];
  /** Host names accepted on loopback connections besides localhost, 127.0.0.1 and [::1]. */
  readonly allowHosts: readonly string[];
}

export type Verdict =
  | { kind: 'pass'; headers: Record<string, string> }
  | { kind: 'refused'; error: ProtocolError }
  | { kind: 'preflight'; response: FullResponse };

const loopbackHosts = ['localhost', '127.0.0.1', '[::1]'];
/** The verdict of every request without an Origin header: shared, so nothing may change it. */
const noOrigin: Verdict = Object.freeze({ kind: 'pass', headers: Object.freeze({}) as Record<string, string> });

function hostWithoutPort(host: string): string {
  const trimmed = host.trim().toLowerCase();
  if (trimmed.startsWith('[')) return trimmed.slice(0, trimmed.indexOf(']') + 1);
  const colon = trimmed.indexOf(':');
  return colon === -1 ? trimmed : trimmed.slice(0, colon);
}

/** A Host header is a name or address, optionally followed by ":" and a port 1-65535 (as node:http's peers expect). */
function hostIsWellFormed(host: string): boolean {
  const match = /^(\[[0-9a-f:.]+\]|[^\s:[\]/@]+)(?::(\d{1,5}))?$/i.exec(host.trim());
  if (!match) return false;
  return match[2] === undefined || (Number(match[2]) >= 1 && Number(match[2]) <= 65535);
}

export { isLoopback };

export function browserGuard(policy: BrowserPolicy): (request: HttpRequest) => Verdict {
  const anyOrigin = policy.allowOrigins.includes('*');
  const origins = new Set(policy.allowOrigins.map((o) => o.trim().toLowerCase().replace(/\/+$/, '')));
  const hosts = new Set([...loopbackHosts, ...policy.allowHosts.map(hostWithoutPort)]);

  // Clients send the same Host on every request: what it says is worked out once per Host value.
  const hostVerdicts = new Map<string, 'named' | 'other' | 'malformed'>();
  const verdictOf = (host: string) => {
    let verdict = hostVerdicts.get(host);
    if (verdict === undefined) {
      verdict = !hostIsWellFormed(host) ? 'malformed' : hosts.has(hostWithoutPort(host)) ? 'named' : 'other';
      if (hostVerdicts.size >= 256) hostVerdicts.delete(hostVerdicts.keys().next().value!);
      hostVerdicts.set(host, verdict);
    }
    return verdict;
  };

  return (request) => {
    const host = request.headers.host;
    const verdict = host === undefined ? 'other' : verdictOf(host);
    if (verdict === 'malformed') {
      return {
        kind: 'refused',
        error: new ProtocolError('INVALID', `The Host header "${host!.slice(0, 100)}" is not a host name with an optional port (1-65535).`, { field: 'Host' }),
      };
    }
    // The peer's address is asked for only when the Host is not one of this machine's names (uWS asks
    // the kernel each time): a request naming this machine passes from any peer.
    if (verdict === 'other' && isLoopback(request.remoteAddress)) {
      return {
        kind: 'refused',
        error: new ProtocolError('ORIGIN_REFUSED', `Host "${host ?? ''}" does not name this machine; on loopback only ${[...hosts].join(', ')} are accepted (add names with --allow-host).`),
      };
    }
    const origin = request.headers.origin;
    if (origin === undefined) return noOrigin;
    if (!anyOrigin && !origins.has(origin.toLowerCase())) {
      return {
        kind: 'refused',
        error: new ProtocolError('ORIGIN_REFUSED', `Web origin "${origin}" is not allowed to call this server (allow it with --allow-origin).`),
      };
    }
    const headers = { 'access-control-allow-origin': origin, vary: 'Origin' };
    if (request.method === 'OPTIONS') {
      return {
        kind: 'preflight',
        response: {
          kind: 'full',
          status: 204,
          headers: {
            ...headers,
            'access-control-allow-methods': 'GET, POST, OPTIONS',
            'access-control-allow-headers': 'authorization, content-type, last-event-id',
            'access-control-max-age': '600',
          },
          body: '',
        },
      };
    }
    return { kind: 'pass', headers };
  };
}
