// `vigil sequence --model` (and sdk.sequence.run's `model`) replaces the model
// of every step of the run and of every child run; a pipeline entry's own
// model still wins for that entry.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeShProject, shRecipe } from './composite-helpers.ts';
import { type Project, runVigil } from './helpers.ts';

vi.setConfig({ testTimeout: 180_000 });

let project: Project;
afterEach(() => project?.cleanup());

const seen = (name: string) => readFileSync(join(project.root, `${name}.txt`), 'utf8').trim();

describe('vigil sequence --model', () => {
  it('replaces the step model of a sequence', async () => {
    project = makeShProject({ git: false });
    shRecipe(project, 'show', 'echo "$$VIGIL_MODEL" > plain.txt', {}, { model: 'recipe-model' });
    expect((await runVigil(project, ['sequence', 'show'])).code).toBe(0);
    expect(seen('plain')).toBe('recipe-model');
    const r = await runVigil(project, ['sequence', 'show', '--model', 'cli-model']);
    expect(r.code, r.stderr).toBe(0);
    expect(seen('plain')).toBe('cli-model');
  });

  it('goes down to the children of a pipeline, below an entry that names its own model', async () => {
    project = makeShProject({ git: false });
    shRecipe(project, 'one', 'echo "$$VIGIL_MODEL" > one.txt', {}, { model: 'recipe-model' });
    shRecipe(project, 'two', 'echo "$$VIGIL_MODEL" > two.txt', {}, { model: 'recipe-model' });
    project.recipe({ name: 'flow', type: 'pipeline', sequences: [{ name: 'one' }, { name: 'two', model: 'entry-model' }] });
    const r = await runVigil(project, ['sequence', 'flow', '--model', 'cli-model']);
    expect(r.code, r.stderr).toBe(0);
    expect(seen('one')).toBe('cli-model');
    expect(seen('two')).toBe('entry-model');
  });

  it('refuses an empty model naming the flag', async () => {
    project = makeShProject({ git: false });
    shRecipe(project, 'show', 'true');
    const r = await runVigil(project, ['sequence', 'show', '--model', '']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--model');
  });
});
