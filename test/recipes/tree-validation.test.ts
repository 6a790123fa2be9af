// Recipe types and whole-tree validation: one schema per type chosen by
// `type`, unknown fields refused naming the path, and the tree of referenced
// recipes checked (missing names, cycles, depth) before anything starts.
import { afterEach, describe, expect, it } from 'vitest';
import { makeProject, type Project, runsOf, runVigil } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('recipe types', () => {
  it('lists all nine types and prints the schema of one', async () => {
    project = makeProject();
    const types = await runVigil(project, ['recipe', 'types']);
    expect(types.code).toBe(0);
    for (const t of ['sequence', 'pipeline', 'compound', 'parallel', 'adversarial', 'convergent', 'temporal', 'sentinel', 'substrate'])
      expect(types.stdout).toMatch(new RegExp(`^${t} `, 'm'));
    const schema = await runVigil(project, ['recipe', 'schema', 'parallel']);
    expect(schema.stdout.trim()).toMatch(/types\/parallel\/schema\.json$/);
    const bad = await runVigil(project, ['recipe', 'schema', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown type "nope"');
  });

  it('refuses an unknown field of each composite type, naming its path and the allowed fields', async () => {
    project = makeProject();
    project.recipe({ name: 'p', type: 'pipeline', sequences: [{ name: 'x', when: 'success' }] });
    project.recipe({ name: 'par', type: 'parallel', recipe: 'x', vars: [{ A: '1' }], fanuot: 2 });
    project.recipe({ name: 'adv', type: 'adversarial', blue: { recipe: 'x', extra: 1 }, red: { recipe: 'x' }, judge: { recipe: 'x' } });
    project.recipe({ name: 'cir', steps: [{ label: 'a', args: [] }], cir: { write_after_stepp: true } });
    const list = await runVigil(project, ['recipe', 'list']);
    for (const name of ['p', 'par', 'adv', 'cir']) expect(list.stderr).toContain(`see "vigil recipe check ${name}"`);
    const said = async (name: string) => (await runVigil(project, ['recipe', 'check', name])).stdout;
    expect(await said('p')).toContain('sequences[0]: unknown field "when"; allowed: name, workspace, model, on, from, pre, vars');
    expect(await said('par')).toMatch(/\(top level\): unknown field "fanuot"; allowed: .*fanout/);
    expect(await said('adv')).toContain('blue: unknown field "extra"; allowed: recipe, vars');
    expect(await said('cir')).toContain('cir: unknown field "write_after_stepp"');
    const run = await runVigil(project, ['sequence', 'par']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown field "fanuot"');
  });

  it('knows temporal, sentinel and substrate recipes but does not run them with "vigil sequence"', async () => {
    project = makeProject();
    project.recipe({ name: 'nightly', type: 'temporal', schedule: '@daily', target: 'x' });
    const list = await runVigil(project, ['recipe', 'list']);
    expect(list.stdout).toMatch(/nightly\s+temporal/);
    const run = await runVigil(project, ['sequence', 'nightly']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('vigil daemon');
    expect(runsOf(project)).toEqual([]);
  });
});

describe('whole-tree validation', () => {
  it('refuses a cycle with its chain, and a missing name with the field that names it', async () => {
    project = makeProject();
    project.recipe({ name: 'release', type: 'pipeline', sequences: [{ name: 'qa' }, { name: 'ghost' }] });
    project.recipe({ name: 'qa', type: 'parallel', recipe: 'release', vars: [{ A: '1' }] });
    const run = await runVigil(project, ['sequence', 'release']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('pipeline "release" → "qa" → "release": cycle');
    expect(run.stderr).toContain('pipeline "release" → "ghost":');
    expect(run.stderr).toContain('sequences[1].name: no recipe named "ghost"');
    expect(runsOf(project)).toEqual([]);
  });

  it('refuses a tree deeper than 8 recipes', async () => {
    project = makeProject();
    for (let i = 0; i < 9; i += 1) project.recipe({ name: `p${i}`, type: 'pipeline', sequences: [{ name: `p${i + 1}` }] });
    project.recipe({ name: 'p9', steps: [{ label: 'a', args: ['x'] }] });
    const run = await runVigil(project, ['sequence', 'p0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('"p8": deeper than 8 levels');
  });

  it('refuses an unknown --from label of a pipeline entry before anything starts', async () => {
    project = makeProject();
    project.recipe({ name: 'pl', type: 'pipeline', sequences: [{ name: 'seq', from: 'nope' }] });
    project.recipe({ name: 'seq', steps: [{ label: 'a', args: ['x'] }] });
    const run = await runVigil(project, ['sequence', 'pl']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('sequences[0].from: recipe "seq" has no step "nope"; steps: a');
  });
});

describe('examples/.vigil/recipes', () => {
  it('has one valid example per composite type', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { checkRecipeSchema } = await import('../../src/recipes/loading/recipe-schema.ts');
    const dir = join(import.meta.dirname, '..', '..', 'examples', '.vigil', 'recipes');
    const types = new Set<string>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const doc = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { type: string };
      expect(checkRecipeSchema(doc), file).toEqual([]);
      types.add(doc.type);
    }
    for (const t of ['pipeline', 'compound', 'parallel', 'adversarial', 'convergent']) expect(types).toContain(t);
  });
});
