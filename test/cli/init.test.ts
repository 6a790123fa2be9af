// Issue 31 point 3: `vigil init` as a new user runs it in an empty folder.
// The README's quick start after it (every recipe type it writes run on the
// local agent, without a model, and the sentinel under `vigil daemon`) is
// docs/tutorials/recipes.md, run as written by test/docs/tutorials.test.ts,
// which checks what it left: run here too, it cost the suite the same eight
// runs, a server and a daemon a second time.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSdkProject, type SdkProject, vigil } from '../sdk/helpers.ts';

let project: SdkProject;
beforeAll(() => {
  project = makeSdkProject();
});
afterAll(() => project.cleanup());

describe('vigil init', { timeout: 300_000 }, () => {
  it('writes vigil.yml, the local agent and a recipe of each type, and refuses to overwrite without --force', async () => {
    const made = await vigil(project, ['init']);
    expect(made.code, made.stderr).toBe(0);
    expect(readFileSync(join(project.root, 'vigil.yml'), 'utf8')).toContain('command: .vigil/agents/local-agent.mjs');
    expect(statSync(join(project.root, '.vigil/agents/local-agent.mjs')).mode & 0o111).not.toBe(0);
    const listed = await vigil(project, ['recipe', 'list']);
    expect(listed.stderr).toBe('');
    const types = new Set(listed.stdout.trim().split('\n').slice(1).map((line) => line.split(/\s+/)[1]));
    expect([...types].sort()).toEqual(['adversarial', 'compound', 'convergent', 'parallel', 'pipeline', 'sentinel', 'sequence', 'substrate', 'temporal']);

    writeFileSync(join(project.root, 'vigil.yml'), 'default_backend: mine\n');
    const again = await vigil(project, ['init']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/vigil\.yml, .* already exist in .*; nothing was written \(--force overwrites\)/);
    expect(readFileSync(join(project.root, 'vigil.yml'), 'utf8')).toBe('default_backend: mine\n');
    const forced = await vigil(project, ['init', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('overwrote vigil.yml');
  });
});
