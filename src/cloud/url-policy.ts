// Where the server may send deliveries. https only; plain http only to
// loopback and only with --allow-insecure-webhooks; private, link-local,
// loopback and other non-public addresses refused unless that flag is set.
// Names are checked when registered and again, through `lookup`, every time
// a delivery connects, so a name that later resolves inward is refused too.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { bareHost, isInwardAddress, isInwardHost, isLocalhostName } from '../net/inward-addresses.ts';
import { isLoopback } from '../service/loopback.ts';
import { invalid } from '../protocol/errors.ts';

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
    const loopback = isLocalhostName(host) || (isIP(host) !== 0 && isLoopback(host));
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
  if (!allowInsecure && isInwardHost(host)) {
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
