// `vigil conform --vendor <segment>` runs the suite against a server of
// another vendor: here a real Vigil behind a proxy that speaks the base
// protocol with the vendor segment ai.other (test/conform/vendor-proxy.ts).
// The suite passes with --vendor ai.other; without it, the checks that read
// bookkeeping types fail, since those are now taken from the flag. The same
// Vigil behind a proxy speaking as ai.mentu (the reference's vendor) is
// measured with --vendor mentu --spec-only: only the checks the base
// specification requires run, and all of them pass.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from '../support/server-process.ts';
import { failedIds, runConform } from './run-conform.ts';
import { otherVendor, startVendorProxy, type VendorProxy } from './vendor-proxy.ts';
import { conformanceChecks, specChecks } from '../../src/conform/suite.ts';
import { scaled } from '../support/time-scale.ts';

describe('vigil conform --vendor', () => {
  let server: ServerProcess;
  let proxy: VendorProxy;
  let mentu: VendorProxy;
  beforeAll(async () => {
    server = await startServerProcess({ transport: 'node', args: ['--allow-admin=conform-admin'] });
    proxy = await startVendorProxy(server.url);
    mentu = await startVendorProxy(server.url, 'ai.mentu');
  });
  afterAll(async () => {
    await mentu?.close();
    await proxy?.close();
    await server?.stop();
  });

  it('takes a bare vendor name and runs only the specification\'s checks with --spec-only', async () => {
    const run = await runConform(['--base', mentu.url, '--vendor', 'mentu', '--spec-only', '--admin-token', 'conform-admin', '--json']);
    expect(failedIds(run), run.stdout + run.stderr).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.report).toMatchObject({ vendor: 'ai.mentu', spec_only: true, failed: 0, skipped: 0 });
    const checks = run.report!.checks as { id: string; basis?: string }[];
    expect(checks.length).toBe(specChecks.length);
    expect(checks.length).toBeLessThan(conformanceChecks.length);
    expect(checks.every((c) => c.basis === 'spec')).toBe(true);
    // The checks whose types carry the vendor ran among them, and read ai.mentu.monitor.*.
    expect(checks.map((c) => c.id)).toEqual(expect.arrayContaining(['MP-3-create-configured', 'MP-9-mute-retirement', 'MP-12-expiry', 'MP-9-subscribe']));
  }, scaled(120_000));

  it('marks each check spec or vigil in the report', async () => {
    const run = await runConform(['--base', mentu.url, '--vendor', 'mentu', '--only', 'MP-3-duplicate-id,MP-13-body-limit']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^MP-3-duplicate-id\s/m);
    expect(run.stdout).toMatch(/^MP-13-body-limit\*\s/m);
    expect(run.stdout).toMatch(/\* a rule of Vigil's own, stricter than the base specification/);
    expect(run.stdout.trim().split('\n').at(-1)).toMatch(/^2 passed, 0 failed/);
  }, scaled(60_000));

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
    const dotted = await runConform(['--base', proxy.url, '--vendor', 'mentu.']);
    expect(dotted.code).toBe(2);
    const self = await runConform(['--self', '--vendor', otherVendor]);
    expect(self.code).toBe(2);
    expect(self.stderr).toMatch(/--self tests this server/);
  }, scaled(60_000));
});
