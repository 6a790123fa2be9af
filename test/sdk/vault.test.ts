import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeSdkProject, type SdkProject, vigil } from './helpers.ts';

// Each test runs the real CLI several times; on a loaded machine one start takes seconds.
vi.setConfig({ testTimeout: 300_000 });

let project: SdkProject;
beforeEach(() => {
  project = makeSdkProject();
});
afterEach(() => project.cleanup());

describe('vigil vault', () => {
  it('stores a value read from stdin encrypted in 0600 files under a 0700 folder, and reads it back', async () => {
    const set = await vigil(project, ['vault', 'set', 'db_pass'], { stdin: 'hunter2-secret\n' });
    expect(set.code, set.stderr).toBe(0);
    const vaultDir = join(project.home, '.vigil');
    expect(statSync(vaultDir).mode & 0o777).toBe(0o700);
    for (const f of ['vault.enc', 'vault.key']) expect(statSync(join(vaultDir, f)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(vaultDir, 'vault.enc'), 'utf8')).not.toContain('hunter2');
    const get = await vigil(project, ['vault', 'get', 'db_pass']);
    expect(get.stdout).toBe('hunter2-secret\n');
    expect((await vigil(project, ['vault', 'get', 'absent', '--json'])).stdout.trim()).toBe('null');
    const missing = await vigil(project, ['vault', 'get', 'absent']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no key "absent"');
  });

  it('separates scopes, lists names only, deletes, and records writes in the ledger without the value', async () => {
    await vigil(project, ['vault', 'set', 'api_key', '--scope', 'api'], { stdin: 'vk_123' });
    await vigil(project, ['vault', 'set', 'token'], { stdin: 'tok' });
    expect((await vigil(project, ['vault', 'get', 'api_key'])).code).toBe(1);
    expect((await vigil(project, ['vault', 'get', 'api_key', '--scope', 'api'])).stdout).toBe('vk_123\n');
    expect(JSON.parse((await vigil(project, ['vault', 'list', '--json'])).stdout)).toEqual(['api/api_key', 'token']);
    expect(JSON.parse((await vigil(project, ['vault', 'list', '--scope', 'api', '--json'])).stdout)).toEqual(['api_key']);
    expect(JSON.parse((await vigil(project, ['vault', 'delete', 'token', '--json'])).stdout)).toEqual({ deleted: true });
    expect(JSON.parse((await vigil(project, ['vault', 'list', '--json'])).stdout)).toEqual(['api/api_key']);
    const ledger = readFileSync(join(project.root, '.vigil', 'ledger.jsonl'), 'utf8');
    expect(ledger).toContain('"kind":"vault.write"');
    expect(ledger).not.toContain('vk_123');
  });

  it('refuses bad keys, scopes and empty values naming the field (exit 2)', async () => {
    const badKey = await vigil(project, ['vault', 'set', 'has space'], { stdin: 'x' });
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toContain('key:');
    const badScope = await vigil(project, ['vault', 'get', 'k', '--scope', '../etc']);
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toContain('scope:');
    const empty = await vigil(project, ['vault', 'set', 'k'], { stdin: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('value:');
    // Standard input is read only as far as a value can go: a runaway pipe is refused, not held in memory.
    const huge = await vigil(project, ['vault', 'set', 'k'], { stdin: 'a'.repeat(300_000) });
    expect(huge.code).toBe(2);
    expect(huge.stderr).toBe('vigil: value: must be at most 65,536 characters; standard input held more\n');
    expect((await vigil(project, ['vault', 'frobnicate'])).code).toBe(2);
    // A value typed after the key is refused without being echoed back, and pointed to stdin.
    const inArgv = await vigil(project, ['vault', 'set', 'k', 'hunter2-secret']);
    expect(inArgv.code).toBe(2);
    expect(inArgv.stderr).toContain('vault set: the value is read from stdin, never from the command line');
    expect(inArgv.stderr).not.toContain('hunter2');
    expect((await vigil(project, ['vault', 'list'])).stdout).toBe('');
  });

  it('moves a plaintext vault.json into the encrypted vault on first use and removes it', async () => {
    const legacy = join(project.home, '.vigil', 'vault.json');
    mkdirSync(join(project.home, '.vigil'), { recursive: true });
    writeFileSync(legacy, JSON.stringify({ 'vigil-vault/default': { old_key: 'legacy' }, 'vigil-vault/api': { api_key: 'vk_old' } }));
    const list = await vigil(project, ['vault', 'list']);
    expect(list.stdout).toBe('api/api_key\nold_key\n');
    expect(list.stderr).toContain('moved 2 keys');
    expect(existsSync(legacy)).toBe(false);
    expect((await vigil(project, ['vault', 'get', 'old_key'])).stdout).toBe('legacy\n');
  });

  it('a recipe requiring a vault key and referring to it with vault:<key> runs once the key is set', async () => {
    project.file('vigil.yml', 'providers:\n  fake:\n    type: custom\n    command: /bin/true\n');
    project.file(
      '.vigil/recipes/needs.json',
      JSON.stringify({ name: 'needs', canary: false, requires: { vault_keys: ['api/api_key'] }, steps: [{ label: 'a', backend: 'fake', args: ['hi'] }] }),
    );
    const refused = await vigil(project, ['sequence', 'needs']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('requires.vault_keys: vault key "api/api_key" is missing');
    await vigil(project, ['vault', 'set', 'api_key', '--scope', 'api'], { stdin: 'vk_1' });
    const ok = await vigil(project, ['sequence', 'needs']);
    expect(ok.stderr).not.toContain('requires.vault_keys');
  });
});
