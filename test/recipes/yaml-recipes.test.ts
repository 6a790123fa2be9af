// Issue 45 point 10: recipes written in YAML (.yml, .yaml) load exactly as
// JSON ones do — same schema, same errors, syntax errors at their line and
// column — and `vigil init --yaml` writes the starters in YAML.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('YAML recipes', () => {
  it('a .yml and a .yaml recipe run as the JSON one does (the same steps, args and variables)', async () => {
    project = makeProject();
    project.yml(`providers:\n  fake:\n    type: custom\n    command: ${project.agent}\n`);
    project.file(
      '.vigil/recipes/greet.yml',
      ['name: greet', 'description: greets in YAML', 'env:', '  WHO: world', 'defaults:', '  backend: fake', 'steps:', '  - label: one', '    prompt: "WRITE hello.txt=hello $WHO\\nSAY DONE"', '  - label: two', '    depends_on: [one]', '    args: ["--flag", "SAY DONE"]', ''].join('\n'),
    );
    project.file('.vigil/recipes/other.yaml', 'name: other\nsteps:\n  - {label: only, backend: fake, prompt: SAY DONE}\n');
    const list = await runVigil(project, ['recipe', 'list']);
    expect(list.stderr).toBe('');
    expect(list.stdout).toMatch(/greet\s+sequence\s+greets in YAML\s+project: .*greet\.yml/);
    expect(list.stdout).toMatch(/other\s+sequence\s+project: .*other\.yaml/);
    const r = await runVigil(project, ['sequence', 'greet', '--var', 'WHO=yaml']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(stepOf(lastRun(project), 'two').status).toBe('succeeded');
    const two = project.logEntries().find((e) => e.step === 'two' && !e.canary)!;
    expect((two.argv as string[]).slice(0, 2)).toEqual(['--flag', 'SAY DONE']);
    const one = project.logEntries().find((e) => e.step === 'one' && !e.canary)!;
    expect(one.prompt).toBe('WRITE hello.txt=hello yaml\nSAY DONE');
    expect((await runVigil(project, ['sequence', 'other'])).code).toBe(0);
  });

  it('a YAML syntax error names the file, line and column; a schema error is the JSON one', async () => {
    project = makeProject();
    project.file('.vigil/recipes/broken.yml', 'name: broken\nsteps:\n  - label: a\n    args: [x\n  - label: b\n');
    project.file('.vigil/recipes/twice.yaml', 'name: twice\nname: again\nsteps: []\n');
    project.file('.vigil/recipes/typo.yml', 'name: typo\nsteps:\n  - label: a\n    args: [x]\n    depends: [b]\n');
    const list = await runVigil(project, ['recipe', 'check', 'broken']);
    expect(list.code).toBe(2);
    expect(list.stdout).toMatch(/schema\s+REFUSED[\s\S]*broken\.yml: not valid YAML: line 5, column 3: Flow sequence/);
    expect((await runVigil(project, ['sequence', 'broken'])).stderr).toMatch(/broken\.yml: not valid YAML: line 5, column 3: /);
    const twice = await runVigil(project, ['sequence', 'twice']);
    expect(twice.stderr).toContain('twice.yaml: not valid YAML: line 2, column 1: Map keys must be unique');
    const typo = await runVigil(project, ['sequence', 'typo']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/typo\.yml: invalid recipe[\s\S]*steps\[0\] \("a"\): unknown field "depends"; allowed: .*depends_on/);
    project.recipe({ name: 'typo-json', steps: [{ label: 'a', args: ['x'], depends: ['b'] }] });
    const json = await runVigil(project, ['sequence', 'typo-json']);
    expect(json.stderr.split('\n').filter((l) => l.includes('unknown field'))).toEqual(typo.stderr.split('\n').filter((l) => l.includes('unknown field')));
  });

  it('a recipe named in both a .json and a .yml file is an error naming both files, and neither runs', async () => {
    project = makeProject();
    const json = project.recipe({ name: 'dup', steps: [{ label: 'a', prompt: 'SAY DONE' }] });
    const yml = project.file('.vigil/recipes/dup.yml', 'name: dup\nsteps:\n  - {label: a, prompt: SAY DONE}\n');
    const r = await runVigil(project, ['sequence', 'dup']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(json);
    expect(r.stderr).toContain(yml);
    expect(r.stderr).toContain('names must be unique');
    const list = await runVigil(project, ['recipe', 'list']);
    expect(list.stdout).not.toMatch(/^dup\s/m);
  });

  it('vigil init --yaml writes the starters as .yml, each the same recipe as the JSON starter, and they run', { timeout: 120_000 }, async () => {
    project = makeProject();
    const init = await runVigil(project, ['init', '--yaml']);
    expect(init.code, init.stderr).toBe(0);
    const dir = join(project.root, '.vigil', 'recipes');
    const names = readdirSync(dir).sort();
    expect(names.every((n) => n.endsWith('.yml'))).toBe(true);
    const { starterFiles } = await import('../../src/recipes/starter/starter-files.ts');
    for (const f of starterFiles().filter((s) => s.path.endsWith('.json')))
      expect(parse(readFileSync(join(project.root, f.path.replace(/\.json$/, '.yml')), 'utf8'))).toEqual(JSON.parse(f.text));
    const list = await runVigil(project, ['recipe', 'list']);
    expect(list.stderr).toBe('');
    expect(list.stdout.trim().split('\n')).toHaveLength(names.length + 1);
    const again = await runVigil(project, ['init', '--force']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('.vigil/recipes/hello.yml is there');
    for (const name of ['hello', 'hello-parallel']) {
      const r = await runVigil(project, ['sequence', name]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    }
  });
});
