// The ledger of a real run (run start, step ends, run end, vault writes),
// plugin hooks fed the same events, and `vigil ledger verify` naming the
// first line broken by an edit.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
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
});
