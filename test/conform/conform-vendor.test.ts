// `vigil conform --vendor <segment>` runs the suite against a server of
// another vendor: here a real Vigil behind a proxy that speaks the base
// protocol with the vendor segment ai.other (test/conform/vendor-proxy.ts).
// The suite passes with --vendor ai.other; without it, the checks that read
// bookkeeping types fail, since those are now taken from the flag.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from '../support/server-process.ts';
import { failedIds, runConform } from './run-conform.ts';
import { otherVendor, startVendorProxy, type VendorProxy } from './vendor-proxy.ts';
import { scaled } from '../support/time-scale.ts';

describe('vigil conform --vendor', () => {
  let server: ServerProcess;
  let proxy: VendorProxy;
  beforeAll(async () => {
    server = await startServerProcess({ transport: 'node', args: ['--allow-admin=conform-admin'] });
    proxy = await startVendorProxy(server.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
  });

  it('passes against a server of another vendor given its segment', async () => {
    const run = await runConform(['--base', proxy.url, '--vendor', otherVendor, '--admin-token', 'conform-admin', '--json']);
    expect(failedIds(run), run.stdout + run.stderr).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.report).toMatchObject({ vendor: otherVendor, failed: 0, skipped: 0 });
  }, scaled(120_000));

  it('fails the vendor-typed checks against it without the flag', async () => {
    const run = await runConform(['--base', proxy.url, '--only', 'MP-3-create-configured,MP-12-expiry,MP-9-mute-retirement', '--json']);
    expect(run.code).toBe(1);
    expect(failedIds(run).sort()).toEqual(['MP-12-expiry', 'MP-3-create-configured', 'MP-9-mute-retirement']);
  }, scaled(60_000));

  it('refuses a malformed segment, and --vendor with --self', async () => {
    const bad = await runConform(['--base', proxy.url, '--vendor', 'Not A Vendor']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--vendor takes a vendor segment/);
    const self = await runConform(['--self', '--vendor', otherVendor]);
    expect(self.code).toBe(2);
    expect(self.stderr).toMatch(/--self tests this server/);
  }, scaled(60_000));
});
