import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bubblewrapFor } from '../support/requirements.ts';
import { customProvider, lastRun, makeProject, type Project, runsOf, runVigil } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

const nothingRan = () => expect(project.logEntries().filter((e) => e.step && e.canary === null)).toEqual([]);

const hasBwrap = bubblewrapFor('the VM isolation test');

describe('refusals before anything runs', () => {
  it('lists every missing binary, environment variable and vault key at once', async () => {
    project = makeProject();
    mkdirSync(join(project.home, '.vigil'), { recursive: true });
    writeFileSync(join(project.home, '.vigil', 'vault.json'), JSON.stringify({ 'vigil-vault/default': { present_key: 's3cret' } }));
    project.recipe({
      name: 'needs',
      steps: [{ label: 'a', args: ['x'] }],
      requires: { bins: ['sh', 'definitely-not-installed-xyz'], env: ['HOME', 'VIGIL_TEST_UNSET_VAR'], vault_keys: ['present_key', 'absent_key'] },
    });
    const r = await runVigil(project, ['sequence', 'needs']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('requires.bins: "definitely-not-installed-xyz" is not on PATH');
    expect(r.stderr).toContain('requires.env: environment variable VIGIL_TEST_UNSET_VAR is not set');
    expect(r.stderr).toContain('requires.vault_keys: vault key "absent_key" is missing');
    expect(r.stderr).not.toContain('"sh"');
    expect(r.stderr).not.toContain('present_key');
    expect(runsOf(project)).toEqual([]);
    nothingRan();
  });

  it('blocks destructive intents in prompts and build commands, naming where they are', async () => {
    project = makeProject();
    const prompt = project.file('prompts/clean.md', 'Tidy up.\nThen run: `rm -rf ~` to be sure\n');
    const recipe = project.recipe({
      name: 'danger',
      steps: [
        { label: 'clean', args: ['-p', 'prompts/clean.md'] },
        { label: 'push', args: ['x'], build_command: 'git push --force origin main' },
        { label: 'db', args: ['then `DROP TABLE users;`'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'danger']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${prompt} (step "clean"):2: recursive delete of $HOME`);
    expect(r.stderr).toContain(`${recipe}: step "push".build_command:1: force push or remote branch deletion`);
    expect(r.stderr).toContain(`${recipe}: step "db".args[0]:1: DROP TABLE/DATABASE`);
    expect(r.stderr).toContain('allow_destructive_intents');
    expect(runsOf(project)).toEqual([]);
    nothingRan();
  });

  it('only warns about destructive intents when the recipe allows them', async () => {
    project = makeProject();
    project.recipe({ name: 'allowed', canary: false, allow_destructive_intents: true, steps: [{ label: 'mk', args: ['format it with `mkfs.ext4 /dev/sdz9`'] }] });
    const r = await runVigil(project, ['sequence', 'allowed']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('warning: destructive intent allowed by the recipe');
    expect(r.stderr).toContain('mkfs');
  });

  it('does not flag ordinary deletes', async () => {
    project = makeProject();
    project.recipe({ name: 'tidy', canary: false, steps: [{ label: 'rm', args: ['x'], build_command: 'rm -rf ./build dist/ && echo git push origin main' }] });
    const r = await runVigil(project, ['sequence', 'tidy']);
    expect(r.code, r.stderr).toBe(0);
  });

  it('names a variable used in a prompt but set nowhere, and the file', async () => {
    project = makeProject();
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the prompt uses the ${NAME} form on purpose
    const prompt = project.file('prompts/p.md', 'Refactor $TARGET using ${STYLE_GUIDE} and $$5 of budget.\n');
    project.recipe({ name: 'vars', steps: [{ label: 'a', args: ['-p', 'prompts/p.md'] }], env: { TARGET: 'src' } });
    const r = await runVigil(project, ['sequence', 'vars']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${prompt}: variable $STYLE_GUIDE is used in this prompt (step "a") but set nowhere`);
    expect(r.stderr).not.toContain('$TARGET');
    expect(runsOf(project)).toEqual([]);
  });

  it('stops early when the canary fails, saying why, before any step', async () => {
    project = makeProject();
    project.recipe({ name: 'canary', steps: [{ label: 'a', args: ['x'] }, { label: 'b', args: ['y'] }] });
    const r = await runVigil(project, ['sequence', 'canary'], { FAKE_CANARY: 'fail' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('canary for backend "claude" failed: claude exited with code 1');
    const run = lastRun(project);
    expect(run.reason).toContain('canary failed');
    expect(run.steps.map((s) => s.status)).toEqual(['skipped', 'skipped']);
    expect(project.logEntries().filter((e) => e.step === 'a' || e.step === 'b')).toEqual([]);
  });

  it('stops early when the canary is too slow', async () => {
    project = makeProject();
    customProvider(project);
    project.recipe({ name: 'slow', canary_timeout: 1, steps: [{ label: 'a', args: ['x'], backend: 'fake' }] });
    const r = await runVigil(project, ['sequence', 'slow'], { FAKE_CANARY: 'slow' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no answer within canary_timeout (1 s)');
    expect(project.logEntries().filter((e) => e.canary === null)).toEqual([]);
  });

  it('refuses VM isolation when bubblewrap is missing instead of running unisolated', async () => {
    project = makeProject();
    // A PATH with the fake agent and node only: no bwrap, wherever this test runs.
    symlinkSync(process.execPath, join(project.bin, 'node'));
    project.recipe({ name: 'boxed', vm: true, steps: [{ label: 'a', args: ['x'] }] });
    const r = await runVigil(project, ['sequence', 'boxed'], { PATH: project.bin });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('step "a" asks for VM isolation (vm: true), but bubblewrap (bwrap) is not installed');
    expect(runsOf(project)).toEqual([]);
    nothingRan();
  });

  it.runIf(hasBwrap)('with bubblewrap, runs the agent and build command sandboxed: only the workspace is writable', async () => {
    project = makeProject();
    const outside = mkdtempSync(join(tmpdir(), 'vigil-outside-'));
    try {
      project.recipe({
        name: 'sandboxed',
        canary: false,
        steps: [
          {
            label: 'a',
            args: ['WRITE=inside.txt:ok'],
            vm: true,
            build_command: `echo built > built.txt; if echo escaped > ${outside}/escape.txt; then exit 7; fi`,
          },
        ],
      });
      const r = await runVigil(project, ['sequence', 'sandboxed']);
      expect(r.code, r.stderr + readFileSync(join(project.root, '.vigil', 'runs', lastRun(project).id, 'steps', 'a.log'), 'utf8')).toBe(0);
      expect(readFileSync(join(project.root, 'inside.txt'), 'utf8')).toBe('ok\n');
      expect(readFileSync(join(project.root, 'built.txt'), 'utf8')).toBe('built\n');
      expect(existsSync(join(outside, 'escape.txt'))).toBe(false);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
