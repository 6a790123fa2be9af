// The ledger of a real run (run start, step ends, run end, vault writes),
// plugin hooks fed the same events, and `vigil ledger verify` naming the
// first line broken by an edit.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { spawnChild } from '../support/children.ts';
import { makeSdkProject, repoRoot, type SdkProject, vigil } from './helpers.ts';

// Each test runs the real CLI several times; on a loaded machine one start takes seconds.
vi.setConfig({ testTimeout: 300_000 });

let project: SdkProject;
beforeEach(() => {
  project = makeSdkProject();
});
afterEach(() => project.cleanup());

describe('ledger', () => {
  it('chains run, step and vault entries, feeds plugin hooks, and names the first broken line after an edit', async () => {
    const agent = project.file('agent.sh', '#!/bin/sh\ncat > /dev/null\necho done\n');
    chmodSync(agent, 0o755);
    project.file('vigil.yml', `providers:\n  sh:\n    type: custom\n    command: ${agent}\n`);
    project.file('.vigil/recipes/two.json', JSON.stringify({ name: 'two', canary: false, steps: [{ label: 'a', backend: 'sh', args: ['x'], max_phases: 1 }, { label: 'b', backend: 'sh', args: ['x'], max_phases: 1 }] }));
    const seen = join(project.root, 'hook-events.jsonl');
    project.file('.vigil/plugins/audit/plugin.json', JSON.stringify({ name: 'audit', hooks: { 'run.end': `cat >> ${seen}; echo >> ${seen}`, 'step.end': `cat >> ${seen}; echo >> ${seen}` } }));
    project.file('.vigil/plugins/broken/plugin.json', JSON.stringify({ name: 'broken', hooks: { 'run.start': 'exit 3' } }));
    expect((await vigil(project, ['sequence', 'two'])).code).toBe(0);
    await vigil(project, ['vault', 'set', 'k'], { stdin: 'secret-value' });

    const file = join(project.root, '.vigil', 'ledger.jsonl');
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    const kinds = lines.map((l) => JSON.parse(l).kind);
    expect(kinds).toEqual(['run.start', 'plugin.hook_failed', 'step.end', 'step.end', 'run.end', 'vault.write']);
    expect(readFileSync(file, 'utf8')).not.toContain('secret-value');
    const hooks = readFileSync(seen, 'utf8').trim().split('\n').map((l) => JSON.parse(l).event);
    expect(hooks).toEqual(['step.end', 'step.end', 'run.end']);

    const ok = await vigil(project, ['ledger', 'verify']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('valid, 6 entries');
    const tampered = [...lines];
    tampered[2] = tampered[2]!.replace('"status":"succeeded"', '"status":"failed"');
    writeFileSync(file, `${tampered.join('\n')}\n`);
    const bad = await vigil(project, ['ledger', 'verify', '--json']);
    // Removing a line is named where the chain breaks.
    writeFileSync(file, `${[...lines.slice(0, 3), ...lines.slice(4)].join('\n')}\n`);
    const removed = await vigil(project, ['ledger', 'verify']);
    expect(removed.stderr).toContain('line 4 breaks the chain: prev');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ valid: false, entries: 6, broken: { line: 3 } });
    expect(bad.stderr).toContain('line 3 breaks the chain: its content does not match its hash');
  });

  it('a lock left by a runner killed with -9 is taken over at once, saying so; one held by a live process still refuses', async () => {
    const lock = join(project.root, '.vigil', 'ledger.jsonl.lock');
    project.file('.vigil/ledger.jsonl', '');
    // A real process takes the ledger's lock through the same code and holds it.
    const holder = holdLock(lock);
    try {
      await holder.held;
      const refused = await vigil(project, ['vault', 'set', 'k'], { stdin: 'v1' });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(`locked by another process for over 10 s (${lock}, held by process ${holder.pid})`);
    } finally {
      holder.kill();
    }
    await holder.gone;
    expect(existsSync(lock)).toBe(true);
    const taken = await vigil(project, ['vault', 'set', 'k'], { stdin: 'v2' });
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stderr.split(`took over the lock ${lock} left by process ${holder.pid}, which is gone`).length - 1).toBe(1);
    expect(existsSync(lock)).toBe(false);
    const kinds = readFileSync(join(project.root, '.vigil', 'ledger.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).kind);
    expect(kinds).toEqual(['vault.write']);
  });
});

function holdLock(lock: string): { pid: number; held: Promise<void>; gone: Promise<void>; kill: () => void } {
  const code = `import { withFileLock } from ${JSON.stringify(join(repoRoot, 'src', 'file-lock', 'file-lock.ts'))};
withFileLock(${JSON.stringify(lock)}, 'LEDGER_BROKEN', () => { console.log('held'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); });`;
  // No tsx compile cache: it would stay behind in /tmp/tsx-<uid>.
  const env = { ...process.env, TSX_DISABLE_CACHE: '1' };
  const child = spawnChild(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const held = new Promise<void>((res, rej) => {
    child.stdout!.on('data', (c: Buffer) => c.toString().includes('held') && res());
    child.once('exit', (c) => rej(new Error(`the lock holder exited (${c}) before taking the lock`)));
  });
  const gone = new Promise<void>((res) => child.once('exit', () => res()));
  return { pid: child.pid!, held, gone, kill: () => child.kill('SIGKILL') };
}
