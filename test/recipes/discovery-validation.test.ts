import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeProject, type Project, runVigil } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

const step = (label: string, extra: Record<string, unknown> = {}) => ({ label, args: ['do it'], ...extra });

describe('finding recipes', () => {
  it('lists project and user recipes with type, description and origin; the project wins a name clash', async () => {
    project = makeProject();
    const projectFile = project.recipe({ name: 'build', description: 'project build', steps: [step('a')] });
    project.recipe({ name: 'build', description: 'user build', steps: [step('a')] }, 'user');
    const userOnly = project.recipe({ name: 'nightly', description: 'user nightly', steps: [step('a')] }, 'user');
    const r = await runVigil(project, ['recipe', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/build\s+sequence\s+project build\s+project: /);
    expect(r.stdout).toContain(projectFile);
    expect(r.stdout).toMatch(/nightly\s+sequence\s+user nightly\s+user: /);
    expect(r.stdout).toContain(userOnly);
    expect(r.stdout).not.toContain('user build');
  });

  it('reports an invalid file in the list without hiding the valid ones', async () => {
    project = makeProject();
    project.recipe({ name: 'good', steps: [step('a')] });
    project.file('.vigil/recipes/broken.json', '{ "name": ');
    const r = await runVigil(project, ['recipe', 'list']);
    expect(r.stdout).toMatch(/good\s+sequence/);
    expect(r.stderr).toContain(join(project.root, '.vigil/recipes/broken.json'));
    expect(r.stderr).toContain('not valid JSON');
  });

  it('names a file far too large for a recipe without reading it, and quotes at most a short piece of a long bad token', async () => {
    project = makeProject();
    project.recipe({ name: 'good', steps: [step('a')] });
    project.file('.vigil/recipes/huge.json', 'x'.repeat(3 * 1024 * 1024));
    project.file('.vigil/recipes/garbage.json', 'y'.repeat(200_000));
    const r = await runVigil(project, ['recipe', 'list']);
    expect(r.stdout).toMatch(/good\s+sequence/);
    expect(r.stderr).toContain(`${join(project.root, '.vigil/recipes/huge.json')}: cannot read the recipe: it holds 3.0 MB; a recipe file is at most 1 MB`);
    expect(r.stderr).toContain(`line 1, column 1: Unexpected "${'y'.repeat(60)}…"`);
    // Before, the message quoted the whole 200,000-character token.
    expect(r.stderr.length).toBeLessThan(2000);
  });
});

describe('refusing invalid recipes before anything runs', () => {
  const refused = async (doc: Record<string, unknown>) => {
    project = makeProject();
    const file = project.recipe(doc);
    const r = await runVigil(project, ['sequence', String(doc.name)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(file);
    expect(existsSync(join(project.root, '.vigil', 'runs'))).toBe(false);
    expect(project.logEntries()).toEqual([]);
    return r.stderr;
  };

  it('names the field path and the allowed values of a schema error', async () => {
    const err = await refused({ name: 'bad', steps: [step('a'), step('b', { effort: 'extreme', timeout: 'soon' })] });
    expect(err).toContain('steps[1] ("b").effort: "extreme" is not allowed; allowed: "low", "medium", "high", "max"');
    expect(err).toContain('steps[1] ("b").timeout: must be integer');
  });

  it('refuses a budget beyond what it can count, naming the limit', async () => {
    // Past these the counters wrapped: 1.5e19 tokens read as a negative cap, and the first message "crossed" it.
    const err = await refused({ name: 'huge', budget: { tokens: 1.5e19, usd: 1e10 }, steps: [step('a', { budget: { minutes: 100000 } })] });
    expect(err).toContain('budget.tokens: must be <= 1000000000000000');
    expect(err).toContain('budget.usd: must be <= 1000000000');
    expect(err).toContain('steps[0] ("a").budget.minutes: must be <= 35000');
  });

  it('names an unknown field and lists the allowed ones', async () => {
    const err = await refused({ name: 'typo', steps: [step('a', { depends: ['x'] })] });
    expect(err).toMatch(/steps\[0\] \("a"\): unknown field "depends"; allowed: .*depends_on/);
  });

  it('refuses a dependency cycle and shows it', async () => {
    const err = await refused({
      name: 'cycle',
      steps: [step('a', { depends_on: ['c'] }), step('b', { depends_on: ['a'] }), step('c', { depends_on: ['b'] })],
    });
    expect(err).toMatch(/dependency cycle (a → c → b → a|c → b → a → c|b → a → c → b)/);
  });

  it('refuses an unknown label in depends_on, listing the labels', async () => {
    const err = await refused({ name: 'unknown', steps: [step('a'), step('b', { depends_on: ['nope'] })] });
    expect(err).toContain('steps[1] ("b").depends_on: unknown label "nope"; labels in this recipe: a, b');
  });

  it('refuses duplicate labels', async () => {
    const err = await refused({ name: 'dup', steps: [step('a'), step('a')] });
    expect(err).toContain('steps[1].label: duplicate label "a" (first used by steps[0])');
  });

  it('refuses a step dir outside the workspace', async () => {
    const err = await refused({ name: 'escape', steps: [step('a', { dir: '../elsewhere' }), step('b', { dir: '/etc' })] });
    expect(err).toContain('steps[0] ("a").dir: "../elsewhere" must be a relative path inside the workspace');
    expect(err).toContain('steps[1] ("b").dir: "/etc" must be a relative path inside the workspace');
  });

  it('refuses a gate_action that is not one of gate_options', async () => {
    const err = await refused({ name: 'gate', steps: [step('a', { gate: 'review', gate_options: ['ship', 'stop'], gate_action: 'maybe' })] });
    expect(err).toContain('gate_action: "maybe" is not one of gate_options: ship, stop');
  });
});

describe('command line', () => {
  it('names the recipes it knows when the name is wrong', async () => {
    project = makeProject();
    project.recipe({ name: 'real', steps: [step('a')] });
    const r = await runVigil(project, ['sequence', 'imaginary']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no recipe named "imaginary"');
    expect(r.stderr).toContain('known recipes: real');
  });

  it('exits 2 on an unknown flag', async () => {
    project = makeProject();
    const r = await runVigil(project, ['sequence', 'x', '--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--bogus');
  });

  it('has help text for every recipe command', async () => {
    project = makeProject();
    for (const [cmd, text] of [
      ['sequence', '--from <label>'],
      ['recipe', 'list'],
      ['runs', 'List recorded runs'],
      ['gate', 'review gate'],
    ] as const) {
      const r = await runVigil(project, [cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(text);
    }
  });

  it('refuses an invalid vigil.yml, naming the file, the field and the allowed values', async () => {
    project = makeProject();
    project.recipe({ name: 'r', steps: [step('a')] });
    project.yml('providers:\n  local:\n    type: llama\n    base_url: http://127.0.0.1:1\n');
    const r = await runVigil(project, ['sequence', 'r']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(project.root, 'vigil.yml')}: invalid workspace file`);
    expect(r.stderr).toContain('providers.local.type: "llama" is not allowed; allowed: "openai", "ollama", "anthropic", "custom"');
  });

  it('refuses a malformed --var', async () => {
    project = makeProject();
    project.recipe({ name: 'r', steps: [step('a')] });
    const r = await runVigil(project, ['sequence', 'r', '--var', '1X=oops']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--var "1X=oops": expected NAME=value');
  });

  it('runs the steps in the recipe workspace, relative to the project root', async () => {
    project = makeProject();
    project.file('services/api/README', 'api\n');
    project.recipe({ name: 'ws', canary: false, workspace: 'services/api', steps: [step('a', { dir: 'src' })] });
    const r = await runVigil(project, ['sequence', 'ws']);
    expect(r.code, r.stderr).toBe(0);
    expect(project.logEntries().find((e) => e.step === 'a')!.cwd).toBe(join(project.root, 'services', 'api', 'src'));
    project.recipe({ name: 'gone', workspace: 'no/such/dir', steps: [step('a')] });
    const missing = await runVigil(project, ['sequence', 'gone']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`workspace: ${join(project.root, 'no/such/dir')} is not a directory`);
  });
});
