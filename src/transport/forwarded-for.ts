// Behind a reverse proxy every request arrives from the proxy's address, so
// per-client limits would count all clients as one (and, with the proxy on
// loopback, not limit anyone). `--trust-proxy <addresses>` names the proxies
// whose X-Forwarded-For is believed: for a request from one of them, the
// client is the right-most forwarded address that is not itself a trusted
// proxy. Anyone else's X-Forwarded-For is ignored, so a client cannot choose
// the address it is limited as.
import { isIP } from 'node:net';
import { hasClientGone } from '../service/client-gone.ts';
import type { HttpHandler, HttpRequest } from './http-types.ts';

function normalize(address: string): string {
  const bare = address.trim().replace(/^\[(.*)\]$/, '$1');
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(bare) ? bare.slice(7) : bare;
}

/** The trusted proxy addresses of `--trust-proxy`, or an error naming the one that is not an IP address. */
export function parseTrustedProxies(list: readonly string[]): string[] {
  return list.map((given) => {
    const address = normalize(given);
    if (isIP(address) === 0) throw new Error(`--trust-proxy: "${given}" is not an IP address (give the proxies' addresses, comma-separated, e.g. 127.0.0.1,::1)`);
    return address;
  });
}

/** The address a request is limited and logged as: its forwarded client when it came through a trusted proxy. */
export function clientAddressOf(request: Pick<HttpRequest, 'remoteAddress' | 'headers'>, trusted: ReadonlySet<string>): string {
  if (!trusted.has(request.remoteAddress)) return request.remoteAddress;
  const forwarded = request.headers['x-forwarded-for'];
  if (forwarded === undefined) return request.remoteAddress;
  const hops = forwarded.split(',').map(normalize);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    // A hop that is not an address (a proxy's "unknown", garbage) ends what can be believed.
    if (isIP(hop) === 0) return request.remoteAddress;
    if (!trusted.has(hop)) return hop;
  }
  return request.remoteAddress;
}

export function trustProxies(handler: HttpHandler, proxies: readonly string[]): HttpHandler {
  if (proxies.length === 0) return handler;
  const trusted = new Set(proxies);
  return (request) => {
    const client = clientAddressOf(request, trusted);
    return handler(client === request.remoteAddress ? request : new ForwardedRequest(request, client));
  };
}

/** The request as its trusted proxy forwarded it: the client's address, the rest the transport's (its getters included). */
class ForwardedRequest implements HttpRequest {
  constructor(
    private readonly request: HttpRequest,
    readonly remoteAddress: string,
  ) {}

  get method(): string {
    return this.request.method;
  }

  get path(): string {
    return this.request.path;
  }

  get query(): string {
    return this.request.query;
  }

  get headers(): Readonly<Record<string, string>> {
    return this.request.headers;
  }

  get body(): Buffer {
    return this.request.body;
  }

  get signal(): AbortSignal {
    return this.request.signal;
  }

  clientGone(): boolean {
    return hasClientGone(this.request);
  }
}
