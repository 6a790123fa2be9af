// What a new user meets first: help, flag errors, README links, conform
// against a wrong address, and the permissions of what the CLI writes.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { repoRoot, startServerProcess, stablePort, tempDir, vigilArgs } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';

function vigil(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, vigilArgs(args), { cwd: repoRoot, encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } });
}

describe('the CLI as a new user meets it', () => {
  it('a command group\'s --help prints help and exits 0, with no "unknown command"', () => {
    const r = vigil(['recipe', 'list', '--help']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage:');
  });

  it('a negative number reaches the flag\'s own check', () => {
    const r = vigil(['serve', '--port', '-1']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('vigil: --port takes a whole number from 0 to 65535; got "-1".\n');
  });

  it('conform against a server that is not there prints one line and exits 3', async () => {
    const port = await stablePort();
    const r = vigil(['conform', '--base', `http://127.0.0.1:${port}`]);
    expect(r.status).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([`vigil conform: cannot reach http://127.0.0.1:${port}/mp/v0: ECONNREFUSED`]);
  });

  it('conform retires the cf-* monitors it created', async () => {
    const server = await startServerProcess();
    try {
      const r = vigil(['conform', '--base', server.url, '--only', 'MP-3-']);
      expect(r.status, r.stdout + r.stderr).toBe(0);
      const listed = await call(server.base, 'GET', '/monitors');
      const mine = (listed.body.monitors as Array<{ id: string; status: string }>).filter((m) => m.id.startsWith('cf-'));
      expect(mine.length).toBeGreaterThan(0);
      expect(mine.filter((m) => m.status !== 'retired')).toEqual([]);
    } finally {
      await server.stop();
    }
  }, scaled(120_000));

  it('a new state folder is 0700 and the state file 0600', async () => {
    const home = tempDir();
    const state = join(home, '.vigil', 'monitors.db');
    const server = await startServerProcess({ state });
    try {
      await call(server.base, 'POST', '/monitors', { body: { id: 'perm' } });
      expect(statSync(dirname(state)).mode & 0o777).toBe(0o700);
      for (const file of [state, `${state}-wal`, `${state}.lock`]) {
        if (existsSync(file)) expect(statSync(file).mode & 0o777, file).toBe(0o600);
      }
    } finally {
      await server.stop();
    }
  });

  it('the README links only to files inside the repository, including docs/recipes.md', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)#\s]+)[^)]*\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l));
    expect(links).toContain('docs/recipes.md');
    for (const link of links) {
      const target = resolve(repoRoot, link);
      expect(target.startsWith(`${repoRoot}/`), link).toBe(true);
      expect(existsSync(target), link).toBe(true);
    }
    expect(readme).not.toMatch(/\.\.\/shared/);
    expect(readme).toMatch(/publish.*3 server unreachable/);
  });

  it('the docs stand alone: no seeds/ files, and protocol.md holds every error code, JSON-RPC method and state table', async () => {
    const { errorCodes } = await import('../../src/protocol/errors.ts');
    const { rpcMethods } = await import('../../src/transport/rpc-door.ts');
    const protocol = readFileSync(join(repoRoot, 'docs/protocol.md'), 'utf8');
    const recipes = readFileSync(join(repoRoot, 'docs/recipes-and-sdk.md'), 'utf8');
    for (const [name, text] of [['protocol.md', protocol], ['recipes-and-sdk.md', recipes]]) expect(text, name).not.toMatch(/seeds\/|the seed/);
    for (const [code, { status, rpc }] of Object.entries(errorCodes)) expect(protocol, code).toContain(`| \`${code}\` | ${status} | ${rpc} |`);
    for (const method of rpcMethods) expect(protocol, method).toContain(`\`${method}\``);
    expect(protocol).toContain('Monitor states (`status`)');
    expect(protocol).toContain('Subscription states');
    expect(protocol).toContain('Lease states and transitions');
    for (const shape of ['TemporalEntry', 'CIRSignal', 'WebhookRegistration', 'RatchetResult', 'DispatchResult']) expect(recipes).toContain(`| ${shape} |`);
  });
});
