// Addresses the server must not be made to reach on someone else's behalf:
// loopback, private, link-local (cloud metadata), carrier-grade NAT,
// multicast and reserved ranges. Webhook deliveries and network sources
// check every connection against them: a name is checked after it resolves
// (so a name that later resolves inward is refused too), a literal address
// before anything connects.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const inward = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  inward.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  inward.addSubnet(net, prefix, 'ipv6');
}

/** True for an inward address, and for anything that is not an address at all. */
export function isInwardAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return inward.check(mapped[1]!, 'ipv4');
  return inward.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** A host name as URLs and connectors give it, without the brackets of an IPv6 literal. */
export const bracketless = (hostname: string) => hostname.replace(/^\[|\]$/g, '');

/** A URL's host without the brackets of an IPv6 literal. */
export const bareHost = (url: URL) => bracketless(url.hostname);

/**
 * True when the host is known to be inward without resolving it: an inward
 * literal address, or `localhost` (which resolvers answer locally).
 */
export function isInwardHost(host: string): boolean {
  if (isLocalhostName(host)) return true;
  return isIP(host) !== 0 && isInwardAddress(host);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net, http, tls and undici connections that refuses inward
 * addresses unless `allowInward`; `hint` ends the refusal's message.
 */
export function guardedLookup(allowInward: boolean, hint?: string) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    const answer = (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (error) return callback(error, []);
      const usable = allowInward ? addresses : addresses.filter((a) => !isInwardAddress(a.address));
      if (usable.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves only to private, loopback or link-local addresses${hint ? `; ${hint}` : ''}`), { code: 'EADDRNOTAVAIL' });
        return callback(refused, []);
      }
      if ((options as { all?: boolean }).all) return callback(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    };
    // RFC 6761: every name under localhost is this machine (managed-edge workers are <name>.localhost), whatever DNS says.
    if (isLocalhostName(hostname)) answer(null, [{ address: '127.0.0.1', family: 4 }]);
    else dnsLookup(hostname, { ...options, all: true }, answer);
  };
}

/** localhost and every name under it (RFC 6761). */
export function isLocalhostName(host: string): boolean {
  const lower = host.toLowerCase().replace(/\.$/, '');
  return lower === 'localhost' || lower.endsWith('.localhost');
}
