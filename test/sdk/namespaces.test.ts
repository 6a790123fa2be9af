// Every local namespace called from real scripts run by the real CLI.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { scaled } from '../support/time-scale.ts';
import { spawnChild } from '../support/children.ts';
import { cliEntry, lastJson, makeSdkProject, projectEnv, repoRoot, type SdkProject, vigil } from './helpers.ts';

// Each test runs the real CLI several times; on a loaded machine one start takes seconds.
vi.setConfig({ testTimeout: 300_000 });

let project: SdkProject;
beforeEach(() => {
  project = makeSdkProject();
});
afterEach(() => project.cleanup());

const agent = join(repoRoot, 'test', 'fakes', 'fake-agent.mjs');

async function run(body: string, args: string[] = []): Promise<unknown> {
  project.script('t.js', body);
  const r = await vigil(project, ['script', 'run', 't', ...args]);
  if (r.code !== 0) throw new Error(`script exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return lastJson(r);
}

describe('sdk namespaces from scripts', () => {
  it('cir: capture, query, search, relate, patterns, contradictions, stats — the same store the CLI reads', async () => {
    const out = (await run(`
      const a = sdk.cir.capture('tests pass', { type: 'test', source: 'run:1' });
      const b = sdk.cir.capture('tests do not pass', { type: 'test', source: 'run:2' });
      sdk.cir.capture('tests pass', { type: 'test', source: 'run:3' });
      sdk.cir.relate(a.id, b.id, 'contradicts');
      return {
        query: sdk.cir.query({ type: 'test', limit: 2 }).length,
        search: sdk.cir.search('pass').length,
        patterns: sdk.cir.patterns().map((p) => p.recurrence_count),
        contradictions: sdk.cir.contradictions().length,
        stats: sdk.cir.stats(),
      };`)) as Record<string, unknown>;
    expect(out).toMatchObject({ query: 2, search: 3, patterns: [2], contradictions: 3 });
    expect(out.stats).toMatchObject({ signals: 3, relations: 1, patterns: 1 });
    const cli = await vigil(project, ['cir', 'stats', '--json']);
    expect(JSON.parse(cli.stdout).signals).toBe(3);
  });

  it('vault: set, get (null when missing), list names only, delete; the CLI sees the same vault', async () => {
    const out = await run(`
      sdk.vault.set('token', 's3cret');
      sdk.vault.set('key', 'v', { scope: 'ci' });
      const r = { got: sdk.vault.get('token'), missing: sdk.vault.get('nope'), list: sdk.vault.list(), ci: sdk.vault.list({ scope: 'ci' }) };
      sdk.vault.delete('token');
      r.after = sdk.vault.list();
      return r;`);
    expect(out).toEqual({ got: 's3cret', missing: null, list: ['ci/key', 'token'], ci: ['key'], after: ['ci/key'] });
    expect((await vigil(project, ['vault', 'get', 'key', '--scope', 'ci'])).stdout).toBe('v\n');
  });

  it('sequence: list and run return the recipes and the run output; ledger.verify checks the chain', async () => {
    project.file('vigil.yml', `providers:\n  fake:\n    type: custom\n    command: ${agent}\n`);
    project.file('.vigil/recipes/greet.json', JSON.stringify({ name: 'greet', canary: false, steps: [{ label: 'hi', backend: 'fake', args: ['SAY=hello-$WHO'] }] }));
    const out = (await run(`
      const output = sdk.sequence.run('greet', { vars: { WHO: 'script' } });
      let failed = '';
      try { sdk.sequence.run('missing-recipe'); } catch (e) { failed = e.code; }
      sdk.vault.set('k', 'v');
      return { list: sdk.sequence.list(), output, failed, ledger: sdk.ledger.verify() };`)) as Record<string, unknown>;
    expect(out.list).toEqual([{ name: 'greet', type: 'sequence' }]);
    expect(String(out.output)).toContain('hello-script');
    expect(out.failed).toBe('SEQUENCE_FAILED');
    expect(out.ledger).toMatchObject({ valid: true });
  });

  it('a script stopped by its timeout cancels the sequence it started (the run is recorded cancelled)', async () => {
    project.file('vigil.yml', `providers:\n  fake:\n    type: custom\n    command: ${agent}\n`);
    project.file('.vigil/recipes/slow.json', JSON.stringify({ name: 'slow', canary: false, steps: [{ label: 'wait', backend: 'fake', args: ['HANG'] }] }));
    project.script('slow.js', `return sdk.sequence.run('slow');`);
    // Long enough for the sequence to have started its step when it fires, on a machine this busy.
    const timeout = Math.max(10, Math.ceil(scaled(5_000) / 1000));
    const r = await vigil(project, ['script', 'run', 'slow', '--timeout', String(timeout)]);
    expect(r.code).toBe(124);
    const runs = join(project.root, '.vigil', 'runs');
    let status = '';
    for (let i = 0; i < 600; i += 1) {
      const id = existsSync(runs) ? readdirSync(runs)[0] : undefined;
      if (!id) {
        await new Promise((res) => setTimeout(res, 200));
        continue;
      }
      status = JSON.parse(readFileSync(join(runs, id, 'run.json'), 'utf8')).status;
      if (status !== 'running') break;
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(status).toBe('cancelled');
  });

  it('a script stopped by SIGINT or SIGTERM cancels the sequence it started before it exits 130 or 143', async () => {
    project.file('vigil.yml', `providers:\n  fake:\n    type: custom\n    command: ${agent}\n`);
    project.file('.vigil/recipes/slow.json', JSON.stringify({ name: 'slow', canary: false, steps: [{ label: 'wait', backend: 'fake', args: ['HANG'] }] }));
    project.script('slow.js', `return sdk.sequence.run('slow');`);
    for (const [signal, exit] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      // Node's own exit on the signal once left the runner and its agent going, the run recorded running.
      const child = spawnChild(process.execPath, [cliEntry, 'script', 'run', 'slow'], { cwd: project.root, env: projectEnv(project), stdio: ['ignore', 'pipe', 'pipe'] });
      let said = '';
      const started = new Promise<void>((res) => {
        const read = (c: Buffer): void => {
          said += c.toString();
          if (said.includes('wait: running')) res();
        };
        child.stdout!.on('data', read);
        child.stderr!.on('data', read);
      });
      const closed = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
      await started;
      child.kill(signal);
      expect(await closed, said).toBe(exit);
      expect(said).toContain(`vigil: script slow stopped by ${signal}; what it started was cancelled`);
      const runs = join(project.root, '.vigil', 'runs');
      const newest = readdirSync(runs).sort().at(-1)!;
      // Recorded before the script ended: it waited for the runner to cancel.
      expect(JSON.parse(readFileSync(join(runs, newest, 'run.json'), 'utf8'))).toMatchObject({ status: 'cancelled', reason: 'the run was cancelled by SIGTERM' });
    }
  });

  it('temporal, notify, health, plugin, ratchet, dispatch, vars and workspace', async () => {
    project.file('src/a.ts', 'TODO one\nTODO two\n');
    project.file('.vigil/ratchet.json', JSON.stringify({ rules: [{ name: 'todos', pattern: 'TODO', include: ['src/**'] }, { name: 'ts-files', glob: '**/*.ts' }] }));
    project.file(
      '.vigil/plugins/shout/plugin.json',
      JSON.stringify({ name: 'shout', version: '1.0.0', hooks: { 'run.end': 'true' }, tools: { upper: { command: `${process.execPath} -e "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>console.log(JSON.stringify({text:JSON.parse(s).text.toUpperCase()})))"`, description: 'upper-cases text' } } }),
    );
    const out = (await run(
      `
      let temporal;
      try { sdk.temporal.status('nightly'); } catch (e) { temporal = e.code; }
      const notified = sdk.notify.send('hello', 'from a script');
      const health = sdk.health.check();
      sdk.ratchet.baseline();
      const before = sdk.ratchet.check();
      const job = sdk.dispatch.send('upper', { text: 'abc' });
      return {
        temporal, temporalList: sdk.temporal.list(), notified: notified === undefined, healthOk: health.ok, components: Object.keys(health.components).sort(),
        plugins: sdk.plugin.list(), before, job, jobStatus: sdk.dispatch.status(job.id).status, tools: sdk.dispatch.list(),
        vars: sdk.vars, workspace: sdk.workspace,
      };`,
      ['--var', 'A=1'],
    )) as Record<string, any>;
    expect(out.temporal).toBe('NOT_FOUND');
    expect(out.temporalList).toEqual([]);
    expect(out.notified).toBe(true);
    expect(out.healthOk).toBe(true);
    expect(out.components).toEqual(['backends', 'cir', 'daemon', 'server', 'store', 'vault']);
    expect(out.plugins).toEqual([{ name: 'shout', version: '1.0.0', hooks: ['run.end'], tools: ['upper'] }]);
    expect(out.before).toMatchObject({ passed: true, violations: [], counts: { todos: 2, 'ts-files': 1 } });
    expect(out.job.status).toBe('queued');
    expect(out.jobStatus).toBe('queued');
    expect(out.tools).toEqual([{ name: 'upper', source: 'plugin:shout', description: 'upper-cases text' }]);
    expect(out.vars).toEqual({ A: '1' });
    expect(out.workspace).toEqual({ path: project.root });

    // The CLI counterparts share the implementation.
    project.file('src/b.ts', 'TODO three\n');
    const check = await vigil(project, ['ratchet', 'check', '--json']);
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout).violations).toEqual([
      { name: 'todos', pattern: 'TODO', count: 3, limit: 2 },
      { name: 'ts-files', pattern: '**/*.ts', count: 2, limit: 1 },
    ]);
    const ran = await vigil(project, ['dispatch', 'run', '--json']);
    expect(JSON.parse(ran.stdout)).toEqual({ ran: 1 });
    const status = JSON.parse((await vigil(project, ['dispatch', 'status', out.job.id, '--json'])).stdout);
    expect(status).toMatchObject({ status: 'succeeded', attempts: 1, result: { text: 'ABC' }, tool: 'upper', source: 'plugin:shout' });
    const note = await vigil(project, ['notify', 'title', 'body']);
    expect(note.code).toBe(0);
    expect(existsSync(join(project.root, '.vigil', 'vigil.db'))).toBe(true);
    writeFileSync(join(project.root, '.vigil', 'ratchet.json'), '{"rules": [{"name": "x"}]}');
    const bad = await vigil(project, ['ratchet', 'check']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('needs exactly one of "pattern" or "glob"');
  });
});
