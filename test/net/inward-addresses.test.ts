// Issue 42: IPv6 forms that carry an inward IPv4 address passed the address
// rules (webhooks, sources, workers' fetches): `::7f00:1` is 127.0.0.1 to
// the kernel. Each such form is judged by the address it carries; public
// addresses in the same forms still pass.
import { describe, expect, it } from 'vitest';
import { checkWebhookUrl } from '../../src/cloud/url-policy.ts';
import { embeddedIpv4, guardedLookup, isInwardAddress } from '../../src/net/inward-addresses.ts';

describe('IPv6 addresses that carry an IPv4 one', () => {
  it.each([
    ['::7f00:1', '127.0.0.1', 'IPv4-compatible'],
    ['::127.0.0.1', '127.0.0.1', 'IPv4-compatible, dotted'],
    ['::ffff:7f00:1', '127.0.0.1', 'IPv4-mapped, hexadecimal'],
    ['::ffff:0:7f00:1', '127.0.0.1', 'IPv4-translated'],
    ['::ffff:0:a9fe:a9fe', '169.254.169.254', 'IPv4-translated, cloud metadata'],
    ['64:ff9b::7f00:1', '127.0.0.1', 'NAT64 well-known prefix'],
    ['64:ff9b::10.0.0.5', '10.0.0.5', 'NAT64, dotted'],
    ['64:ff9b:1:a9fe:a9:fe00::', '169.254.169.254', 'NAT64 local-use /48'],
    ['2002:c0a8:101::1', '192.168.1.1', '6to4'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', '127.0.0.1', 'Teredo (client address obscured)'],
    ['2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7', '169.254.169.254', 'Teredo (server address)'],
  ])('%s is inward (%s, %s)', (address, carried) => {
    expect(embeddedIpv4(address)).toContain(carried);
    expect(isInwardAddress(address)).toBe(true);
  });

  it('refuses the discard-only prefix 100::/64 and keeps public addresses in every form', () => {
    expect(isInwardAddress('100::1')).toBe(true);
    expect(isInwardAddress('100::ffff:ffff:ffff:ffff')).toBe(true);
    for (const address of ['2606:4700::1111', '64:ff9b::808:808', '2002:808:808::1', '::ffff:8.8.8.8', '2001:0:808:808::f7f7:f7f7', '100:0:0:1::1']) {
      expect(isInwardAddress(address), address).toBe(false);
    }
  });

  it('the rules that use them refuse such a literal: webhook URLs and resolved names', async () => {
    expect(() => checkWebhookUrl('https://[::7f00:1]/hook', false)).toThrow(/private, loopback or link-local address/);
    expect(() => checkWebhookUrl('https://[64:ff9b::a9fe:a9fe]/latest/meta-data', false)).toThrow(/private, loopback or link-local address/);
    const lookup = guardedLookup(false);
    const refused = await new Promise<Error | null>((done) => lookup('::ffff:0:7f00:1', { all: true }, (error) => done(error)));
    expect(refused?.message).toMatch(/resolves only to private, loopback or link-local addresses/);
  });
});
