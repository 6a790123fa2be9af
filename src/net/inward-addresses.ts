// Addresses the server must not be made to reach on someone else's behalf:
// loopback, private, link-local (cloud metadata), carrier-grade NAT,
// multicast and reserved ranges. Webhook deliveries and network sources
// check every connection against them: a name is checked after it resolves
// (so a name that later resolves inward is refused too), a literal address
// before anything connects. IPv6 forms that carry an IPv4 address (mapped,
// compatible, translated, NAT64, 6to4, Teredo) are judged by the address
// they carry: `::7f00:1` is 127.0.0.1.
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
  // Discard-only (RFC 6666).
  ['100::', 64],
] as const) {
  inward.addSubnet(net, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address (isIP already said it is one), a dotted IPv4 tail included. */
function ipv6Bytes(address: string): number[] {
  let text = address.replace(/%.*$/, '').toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.flatMap((g) => {
    const n = Number.parseInt(g || '0', 16);
    return [n >> 8, n & 0xff];
  });
}

const v4 = (b: number[]) => b.join('.');
const zero = (bytes: number[], from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);

/** The IPv4 addresses an IPv6 one carries, by the form it has; none for a plain IPv6 address. */
export function embeddedIpv4(address: string): string[] {
  const b = ipv6Bytes(address);
  const last = b.slice(12, 16);
  // ::a.b.c.d (compatible), ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated).
  if (zero(b, 0, 10) && ((b[10] === 0 && b[11] === 0) || (b[10] === 0xff && b[11] === 0xff))) return [v4(last)];
  if (zero(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return [v4(last)];
  // NAT64: the well-known prefix 64:ff9b::/96, and the local-use 64:ff9b:1::/48 (RFC 8215; address in bits 48-63 and 72-87).
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    if (zero(b, 4, 12)) return [v4(last)];
    if (b[4] === 0 && b[5] === 1) return [v4([b[6]!, b[7]!, b[9]!, b[10]!])];
  }
  // 6to4 2002::/16: the address follows the prefix.
  if (b[0] === 0x20 && b[1] === 0x02) return [v4(b.slice(2, 6))];
  // Teredo 2001::/32: the server's address, and the client's, obscured (each bit flipped) in the last 32 bits.
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return [v4(b.slice(4, 8)), v4(last.map((x) => x ^ 0xff))];
  return [];
}

/** True for an inward address, and for anything that is not an address at all. */
export function isInwardAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return inward.check(address, 'ipv4');
  if (inward.check(address, 'ipv6')) return true;
  return embeddedIpv4(address).some((carried) => inward.check(carried, 'ipv4'));
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
