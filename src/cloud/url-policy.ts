// Where the server may send deliveries. https only; plain http only to
// loopback and only with --allow-insecure-webhooks; private, link-local,
// loopback and other non-public addresses refused unless that flag is set.
// Names are checked when registered and again, through `lookup`, every time
// a delivery connects, so a name that later resolves inward is refused too.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { invalid } from '../protocol/errors.ts';

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

export function isInwardAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return inward.check(mapped[1]!, 'ipv4');
  return inward.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const isLoopbackAddress = (address: string) => address === '::1' || /^(::ffff:)?127\./i.test(address);

const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Checks a registered url's form; returns it normalised. */
export function checkWebhookUrl(text: unknown, allowInsecure: boolean): string {
  if (typeof text !== 'string' || text.length === 0 || text.length > 2048) {
    throw invalid('"url" must be an https URL of at most 2048 characters.', { field: 'url' });
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`"url" is not a URL: "${text}".`, { field: 'url' });
  }
  if (url.username || url.password) throw invalid('"url" must not carry a user name or password.', { field: 'url' });
  const host = bareHost(url);
  if (url.protocol === 'http:') {
    const loopback = host === 'localhost' || (isIP(host) !== 0 && isLoopbackAddress(host));
    if (!allowInsecure || !loopback) {
      throw invalid(
        allowInsecure
          ? '"url" must be https; plain http is accepted only for loopback addresses (localhost, 127.0.0.1, ::1).'
          : '"url" must be https (this server accepts plain http to loopback only when started with --allow-insecure-webhooks).',
        { field: 'url' },
      );
    }
  } else if (url.protocol !== 'https:') {
    throw invalid(`"url" must be https; got the scheme "${url.protocol.replace(':', '')}".`, { field: 'url' });
  }
  if (!allowInsecure && (host === 'localhost' || (isIP(host) !== 0 && isInwardAddress(host)))) {
    throw invalid(`"url" points at a private, loopback or link-local address (${host}); this server sends only to public addresses.`, {
      field: 'url',
    });
  }
  return url.toString();
}

/** Resolves a name and refuses it when every address it has is inward. */
export async function checkResolvedHost(url: string, allowInsecure: boolean): Promise<void> {
  if (allowInsecure) return;
  const host = bareHost(new URL(url));
  if (isIP(host) !== 0) return;
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(host, { all: true }, (error, found) => (error ? reject(error) : resolve(found))),
  ).catch(() => {
    throw invalid(`"url" names a host that does not resolve: ${host}.`, { field: 'url' });
  });
  if (addresses.some((a) => isInwardAddress(a.address))) {
    throw invalid(`"url" names a host that resolves to a private or link-local address (${host}); this server sends only to public addresses.`, {
      field: 'url',
    });
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http(s).request that refuses inward addresses at connect time. */
export function guardedLookup(allowInsecure: boolean) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const usable = allowInsecure ? addresses : addresses.filter((a) => !isInwardAddress(a.address));
      if (usable.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves only to private or link-local addresses`), { code: 'EADDRNOTAVAIL' });
        return callback(refused, []);
      }
      if ((options as { all?: boolean }).all) return callback(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
