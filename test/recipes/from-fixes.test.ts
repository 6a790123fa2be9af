import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShProject, rootRun, runById } from './composite-helpers.ts';
import { customProvider, lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

const ran = (p: Project) => readFileSync(join(p.root, 'ran.log'), 'utf8').trim().split('\n');

describe('--from, canary: false and VIGIL_HOME (issue 28, point 5)', () => {
  it('a pipeline entry with from does not need the variables of the steps it reuses', async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'second',
      canary: false,
      steps: [
        { label: 'a', args: ['echo a $ONLY_FOR_A >> ran.log'] },
        { label: 'b', args: ['echo b >> ran.log; [ -f fixed ]'] },
      ],
    });
    expect((await runVigil(project, ['sequence', 'second', '--var', 'ONLY_FOR_A=x'])).code).toBe(1);
    writeFileSync(join(project.root, 'fixed'), '');
    writeFileSync(join(project.root, 'ran.log'), '');
    project.recipe({ name: 'rel', type: 'pipeline', sequences: [{ name: 'second', from: 'b' }] });
    const r = await runVigil(project, ['sequence', 'rel']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const child = runById(project, rootRun(project).children![0]!.run_id!);
    expect(stepOf(child, 'a').status).toBe('reused');
    expect(stepOf(child, 'b').status).toBe('succeeded');
    expect(ran(project)).toEqual(['b']);
  });

  it('--from runs again the steps written after that step, even independent ones', async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'seq',
      canary: false,
      steps: [
        { label: 'a', args: ['echo a >> ran.log'] },
        { label: 'b', args: ['echo b >> ran.log; [ -f fixed ]'], depends_on: ['a'] },
        { label: 'c', args: ['echo c >> ran.log'], depends_on: [] },
      ],
    });
    expect((await runVigil(project, ['sequence', 'seq'])).code).toBe(1);
    expect(stepOf(lastRun(project), 'c').status).toBe('succeeded');
    writeFileSync(join(project.root, 'fixed'), '');
    writeFileSync(join(project.root, 'ran.log'), '');
    const r = await runVigil(project, ['sequence', 'seq', '--from', 'b']);
    expect(r.code, r.stderr).toBe(0);
    const run = lastRun(project);
    expect(stepOf(run, 'a').status).toBe('reused');
    expect(stepOf(run, 'c').status).toBe('succeeded');
    expect(ran(project).sort()).toEqual(['b', 'c']);
  });

  it('canary: false on a composite holds for the recipes it runs', async () => {
    project = makeProject();
    customProvider(project);
    project.recipe({ name: 'child', steps: [{ label: 'work', backend: 'fake', args: ['SAY=DONE'] }] });
    project.recipe({ name: 'pipe', type: 'pipeline', canary: false, sequences: [{ name: 'child' }] });
    // The backend's canary would fail: with canary false above, it is never asked.
    const r = await runVigil(project, ['sequence', 'pipe'], { FAKE_CANARY: 'fail' });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(project.logEntries().filter((c) => c.canary !== null)).toEqual([]);
    // Without it, the child's canary runs (and fails here).
    project.recipe({ name: 'pipe2', type: 'pipeline', sequences: [{ name: 'child' }] });
    const s = await runVigil(project, ['sequence', 'pipe2'], { FAKE_CANARY: 'fail' });
    expect(s.code).toBe(1);
    expect(s.stderr).toContain('canary for backend "fake" failed');
  });

  it('VIGIL_HOME moves the user recipe folder with it', async () => {
    project = makeShProject({ git: false });
    const vigilHome = join(project.root, '.elsewhere');
    mkdirSync(join(vigilHome, 'recipes'), { recursive: true });
    writeFileSync(join(vigilHome, 'recipes', 'mine.json'), JSON.stringify({ name: 'mine', canary: false, steps: [{ label: 'a', args: ['echo mine >> ran.log'] }] }));
    const list = await runVigil(project, ['recipe', 'list'], { VIGIL_HOME: vigilHome });
    expect(list.stdout).toMatch(new RegExp(`mine .*user: ${join(vigilHome, 'recipes', 'mine.json')}`));
    const r = await runVigil(project, ['sequence', 'mine'], { VIGIL_HOME: vigilHome });
    expect(r.code, r.stderr).toBe(0);
    expect(ran(project)).toEqual(['mine']);
    // ~/.vigil/recipes is not read when VIGIL_HOME points elsewhere.
    project.recipe({ name: 'homeonly', canary: false, steps: [{ label: 'a', args: ['true'] }] }, 'user');
    const missing = await runVigil(project, ['sequence', 'homeonly'], { VIGIL_HOME: vigilHome });
    expect(missing.code).toBe(2);
  });
});
