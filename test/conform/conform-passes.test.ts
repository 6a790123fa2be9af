// `vigil conform` passes against this package: in-process (--self) and
// against a separately started `vigil serve`. Usage errors exit 2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from '../support/server-process.ts';
import { failedIds, runConform } from './run-conform.ts';
import { scaled } from '../support/time-scale.ts';

describe('vigil conform', () => {
  it('passes with --self and prints a machine-readable report', async () => {
    const run = await runConform(['--self', '--json']);
    expect(failedIds(run), run.stdout + run.stderr).toEqual([]);
    expect(run.code).toBe(0);
    const report = run.report!;
    expect(report.failed).toBe(0);
    expect(report.passed).toBe(report.checks.length);
    expect(report.checks.length).toBeGreaterThanOrEqual(90);
    for (const c of report.checks) {
      expect(c.id).toMatch(/^MP-\d+-[a-z0-9-]+$/);
      expect(c).toMatchObject({ ok: true, section: expect.stringMatching(/^§\d+$/), name: expect.any(String), reason: expect.any(String) });
    }
  }, scaled(60_000));

  it('prints a table and a summary line without --json', async () => {
    const run = await runConform(['--self', '--only', 'MP-2-,MP-1-']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^id\s+name\s+ok\s+reason/m);
    // A check resting on a rule of Vigil's own is marked *; one the base specification requires is not.
    expect(run.stdout).toMatch(/^MP-2-discover\*\s+.+\s+pass/m);
    expect(run.stdout).toMatch(/^MP-1-error-shape\s+.+\s+pass/m);
    expect(run.stdout).toMatch(/^\d+ passed, 0 failed/m);
  }, scaled(60_000));

  it('exits 2 on usage errors', async () => {
    const neither = await runConform([]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(/--base <url> or --self/);
    const both = await runConform(['--self', '--base', 'http://127.0.0.1:1']);
    expect(both.code).toBe(2);
    const badUrl = await runConform(['--base', 'not-a-url']);
    expect(badUrl.code).toBe(2);
  }, scaled(60_000));

  describe('against a separately started vigil serve', () => {
    let server: ServerProcess;
    beforeAll(async () => {
      server = await startServerProcess({ transport: 'node', args: ['--allow-admin=conform-admin'] });
    });
    afterAll(() => server?.stop());

    it('passes, given the origin or the /mp/v0 root, with the admin checks', async () => {
      const run = await runConform(['--base', server.url, '--admin-token', 'conform-admin', '--json']);
      expect(failedIds(run), run.stdout + run.stderr).toEqual([]);
      expect(run.code).toBe(0);
      expect(run.report!.skipped).toBe(0);
      const root = await runConform(['--base', server.base, '--only', 'MP-3-', '--json']);
      expect(root.code).toBe(0);
      expect(root.report!.passed).toBeGreaterThan(5);
    }, scaled(60_000));
  });
});
