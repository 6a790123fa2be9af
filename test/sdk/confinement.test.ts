// A script's SDK calls stay inside its workspace: a path it names (or a
// symlink planted in the workspace) that resolves outside is refused naming
// the field, without a word of what the file holds; the vault scopes that
// hold Vigil's own credentials are out of a script's reach, though the CLI
// still manages them.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { lastJson, makeSdkProject, type SdkProject, vigil } from './helpers.ts';

vi.setConfig({ testTimeout: 300_000 });

const secret = 'TOP-SECRET-CONTENT-42';
let project: SdkProject;
let outside: string;
beforeEach(() => {
  project = makeSdkProject();
  outside = mkdtempSync(join(tmpdir(), 'vigil-outside-'));
});
afterEach(() => {
  project.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

/** Each attempt's outcome as the script sees it: the error's code, field and message, or what it returned. */
const attempts = (calls: Record<string, string>) =>
  `const out = {};
${Object.entries(calls)
  .map(([name, call]) => `try { out[${JSON.stringify(name)}] = { returned: ${call} }; } catch (e) { out[${JSON.stringify(name)}] = { code: e.code, field: e.details && e.details.field, message: e.message }; }`)
  .join('\n')}
return out;`;

describe('SDK paths and vault scopes from a script', () => {
  it('ratchet refuses configs and sources outside the workspace, symlinks included, and never quotes the file', async () => {
    const secretFile = join(outside, 'secret.json');
    writeFileSync(secretFile, `${secret} {"rules": []}\n`);
    mkdirSync(join(outside, 'src'));
    writeFileSync(join(outside, 'src', 'a.ts'), `// ${secret}\n`);
    project.file('src/ok.ts', '// TODO\n');
    project.file('rules.json', JSON.stringify({ rules: [{ name: 'todos', pattern: 'TODO', include: ['src/**'] }] }));
    project.file('broken.json', `${secret} not json`);
    symlinkSync(secretFile, join(project.root, 'link.json'));
    symlinkSync(join(outside, 'src'), join(project.root, 'linked-src'));
    project.script(
      'probe.js',
      attempts({
        passwd: "sdk.ratchet.check({ config: '/etc/passwd' })",
        dotdot: `sdk.ratchet.check({ config: '../${join(outside.split('/').at(-1)!, 'secret.json')}' })`,
        absolute: `sdk.ratchet.check({ config: ${JSON.stringify(secretFile)} })`,
        symlink: "sdk.ratchet.check({ config: 'link.json' })",
        source: `sdk.ratchet.check({ config: 'rules.json', source: ${JSON.stringify(outside)} })`,
        linkedSource: "sdk.ratchet.check({ config: 'rules.json', source: 'linked-src' })",
        broken: "sdk.ratchet.check({ config: 'broken.json' })",
        inside: "sdk.ratchet.check({ config: 'rules.json' }).counts",
      }),
    );
    const r = await vigil(project, ['script', 'run', 'probe']);
    expect(r.code, r.stderr).toBe(0);
    const out = lastJson(r) as Record<string, { code?: string; field?: string; message?: string; returned?: unknown }>;
    for (const name of ['passwd', 'dotdot', 'absolute', 'symlink']) {
      expect(out[name], name).toMatchObject({ code: 'SANDBOX_VIOLATION', field: 'config' });
      expect(out[name]!.message).toMatch(/^config: .* is outside the workspace/);
    }
    for (const name of ['source', 'linkedSource']) expect(out[name], name).toMatchObject({ code: 'SANDBOX_VIOLATION', field: 'source' });
    expect(out.broken).toMatchObject({ code: 'RATCHET_CONFIG' });
    expect(out.broken!.message).toMatch(/broken\.json: not valid JSON/);
    expect(out.inside).toEqual({ returned: { todos: 1 } });
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(r.stdout + r.stderr).not.toContain('root:');
  });

  it('the default config and Vigil folders symlinked out of the project are refused too', async () => {
    writeFileSync(join(outside, 'ratchet.json'), `${secret}\n`);
    symlinkSync(join(outside, 'ratchet.json'), join(project.root, '.vigil', 'ratchet.json'));
    mkdirSync(join(outside, 'evil'));
    writeFileSync(join(outside, 'evil', 'plugin.json'), JSON.stringify({ name: 'evil', tools: { read: { command: 'cat /etc/passwd' } } }));
    mkdirSync(join(project.root, '.vigil', 'plugins'));
    symlinkSync(join(outside, 'evil'), join(project.root, '.vigil', 'plugins', 'evil'));
    project.file('.vigil/plugins/good/plugin.json', JSON.stringify({ name: 'good', tools: { hi: { command: 'echo hi' } } }));
    symlinkSync(outside, join(project.root, '.vigil', 'workers'));
    writeFileSync(join(outside, 'ledger.jsonl'), `${secret}\n`);
    symlinkSync(join(outside, 'ledger.jsonl'), join(project.root, '.vigil', 'ledger.jsonl'));
    symlinkSync(join(outside, 'cir.db'), join(project.root, '.vigil', 'cir.db'));
    project.script(
      'probe.js',
      attempts({
        ratchet: 'sdk.ratchet.check()',
        plugins: 'sdk.plugin.list().map((p) => p.name)',
        tools: 'sdk.dispatch.list().map((t) => t.source + "/" + t.name)',
        worker: "sdk.worker.create('w1')",
        ledger: 'sdk.ledger.verify()',
        cir: 'sdk.cir.stats()',
      }),
    );
    const r = await vigil(project, ['script', 'run', 'probe']);
    expect(r.code, r.stderr).toBe(0);
    const out = lastJson(r) as Record<string, { code?: string; field?: string; returned?: unknown }>;
    expect(out.ratchet).toMatchObject({ code: 'SANDBOX_VIOLATION', field: 'config' });
    expect(out.plugins).toEqual({ returned: ['good'] });
    expect(out.tools).toEqual({ returned: ['plugin:good/hi'] });
    expect(out.worker).toMatchObject({ code: 'SANDBOX_VIOLATION', field: 'name' });
    expect(out.ledger).toMatchObject({ code: 'SANDBOX_VIOLATION', field: 'ledger' });
    expect(out.cir).toMatchObject({ code: 'SANDBOX_VIOLATION', field: 'cir.db' });
    expect(r.stdout + r.stderr).not.toContain(secret);
  });

  it('the api and worker vault scopes are refused to scripts, named and explained; the CLI still manages them', async () => {
    expect((await vigil(project, ['vault', 'set', 'api_key', '--scope', 'api'], { stdin: 'vk_cloud_key' })).code).toBe(0);
    expect((await vigil(project, ['vault', 'set', 'api_token', '--scope', 'worker'], { stdin: 'edge-token' })).code).toBe(0);
    project.script(
      'probe.js',
      attempts({
        getApi: "sdk.vault.get('api_key', { scope: 'api' })",
        listApi: "sdk.vault.list({ scope: 'api' })",
        getWorker: "sdk.vault.get('api_token', { scope: 'worker' })",
        listWorker: "sdk.vault.list({ scope: 'worker' })",
        overwrite: "sdk.vault.set('api_key', 'vk_attacker', { scope: 'api' })",
        all: 'sdk.vault.list()',
        own: "(sdk.vault.set('mine', 'x'), sdk.vault.get('mine'))",
      }),
    );
    const r = await vigil(project, ['script', 'run', 'probe']);
    expect(r.code, r.stderr).toBe(0);
    const out = lastJson(r) as Record<string, { code?: string; field?: string; message?: string; returned?: unknown }>;
    for (const name of ['getApi', 'listApi', 'getWorker', 'listWorker', 'overwrite']) {
      expect(out[name], name).toMatchObject({ code: 'SANDBOX_VIOLATION', field: 'scope' });
    }
    expect(out.getApi!.message).toContain('the "api" vault scope holds Vigil\'s own credentials');
    expect(out.all).toEqual({ returned: [] });
    expect(out.own).toEqual({ returned: 'x' });
    expect(r.stdout + r.stderr).not.toContain('vk_cloud_key');
    expect(r.stdout + r.stderr).not.toContain('edge-token');
    expect((await vigil(project, ['vault', 'get', 'api_key', '--scope', 'api'])).stdout).toBe('vk_cloud_key\n');
  });
});
