import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShProject, rootRun, runById } from './composite-helpers.ts';
import { lastRun, type Project, runVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

const ran = (p: Project) => readFileSync(join(p.root, 'ran.log'), 'utf8').trim().split('\n');
// A step that logs its label, and fails until the file "fixed" exists.
const flaky = (label: string) => `echo ${label} >> ran.log; [ -f fixed ]`;
const fine = (label: string) => `echo ${label} >> ran.log`;

describe('vigil sequence --resume <run>', () => {
  it('re-runs what failed, was skipped or never finished, and keeps what succeeded', async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'build',
      canary: false,
      steps: [
        { label: 'a', args: [fine('a')] },
        { label: 'b', args: [flaky('b')] },
        { label: 'c', args: [fine('c')] },
        { label: 'd', args: [fine('d')], depends_on: ['a'] },
      ],
    });
    const first = await runVigil(project, ['sequence', 'build']);
    expect(first.code).toBe(1);
    const failed = lastRun(project);
    expect(failed.steps.map((s) => s.status)).toEqual(['succeeded', 'failed', 'skipped', 'succeeded']);
    writeFileSync(join(project.root, 'fixed'), '');
    writeFileSync(join(project.root, 'ran.log'), '');
    const again = await runVigil(project, ['sequence', 'build', '--resume', failed.id]);
    expect(again.code, again.stderr).toBe(0);
    const run = lastRun(project);
    expect(run.resumed_from).toBe(failed.id);
    expect(stepOf(run, 'a').status).toBe('reused');
    expect(stepOf(run, 'd').status).toBe('reused');
    expect(stepOf(run, 'b').status).toBe('succeeded');
    expect(stepOf(run, 'c').status).toBe('succeeded');
    expect(ran(project)).toEqual(['b', 'c']);
  });

  it("a resumed run whose last step is reused has that step's output as its own (a resumed judge once gave no verdict)", async () => {
    project = makeShProject({ git: false });
    project.recipe({ name: 'answer', canary: false, steps: [{ label: 'prepare', args: [fine('prepare')] }, { label: 'think', args: ['echo the answer is 42'], depends_on: ['prepare'] }] });
    const first = await runVigil(project, ['sequence', 'answer']);
    expect(first.code, first.stderr).toBe(0);
    const done = lastRun(project);
    const outputOf = (id: string) => readFileSync(join(project.root, '.vigil', 'runs', id, 'output.txt'), 'utf8');
    expect(outputOf(done.id)).toBe('the answer is 42\n');
    // As a composite's child whose runner died after its steps ended: every step is reused.
    const again = await runVigil(project, ['sequence', 'answer', '--resume', done.id]);
    expect(again.code, again.stderr).toBe(0);
    const resumed = lastRun(project);
    expect(resumed.steps.map((s) => s.status)).toEqual(['reused', 'reused']);
    expect(outputOf(resumed.id)).toBe('the answer is 42\n');
    expect(ran(project)).toEqual(['prepare']);
  });

  it('resumes a pipeline: entries that succeeded are kept, the failed entry resumes its own run, later entries run', async () => {
    project = makeShProject({ git: false });
    project.recipe({ name: 'first', canary: false, steps: [{ label: 'one', args: [fine('first')] }] });
    project.recipe({ name: 'second', canary: false, steps: [{ label: 'x', args: [fine('second.x')] }, { label: 'y', args: [flaky('second.y')] }] });
    project.recipe({ name: 'third', canary: false, steps: [{ label: 'z', args: [fine('third')] }] });
    project.recipe({ name: 'release', type: 'pipeline', sequences: [{ name: 'first' }, { name: 'second' }, { name: 'third' }] });
    const first = await runVigil(project, ['sequence', 'release']);
    expect(first.code).toBe(1);
    const failed = rootRun(project);
    expect(failed.children!.map((c) => c.status)).toEqual(['succeeded', 'failed', 'skipped']);
    writeFileSync(join(project.root, 'fixed'), '');
    writeFileSync(join(project.root, 'ran.log'), '');
    const again = await runVigil(project, ['sequence', 'release', '--resume', failed.id]);
    expect(again.code, again.stderr + again.stdout).toBe(0);
    const run = rootRun(project);
    expect(run.id).not.toBe(failed.id);
    expect(run.resumed_from).toBe(failed.id);
    expect(run.children!.map((c) => c.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(run.children![0]!.run_id).toBe(failed.children![0]!.run_id);
    expect(run.children![0]!.reason).toContain(`succeeded in run ${failed.id}`);
    const second = runById(project, run.children![1]!.run_id!);
    expect(second.resumed_from).toBe(failed.children![1]!.run_id);
    expect(stepOf(second, 'x').status).toBe('reused');
    expect(stepOf(second, 'y').status).toBe('succeeded');
    expect(ran(project)).toEqual(['second.y', 'third']);
  });

  it('refuses an unknown run, a run of another recipe, and --resume with --from', async () => {
    project = makeShProject({ git: false });
    project.recipe({ name: 'one', canary: false, steps: [{ label: 'a', args: ['true'] }] });
    project.recipe({ name: 'two', canary: false, steps: [{ label: 'a', args: ['true'] }] });
    expect((await runVigil(project, ['sequence', 'one'])).code).toBe(0);
    const id = lastRun(project).id;
    const unknown = await runVigil(project, ['sequence', 'one', '--resume', '20990101-000000-abcd']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--resume 20990101-000000-abcd: no run with that id');
    const other = await runVigil(project, ['sequence', 'two', '--resume', id]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`--resume ${id}: that run is of recipe "one", not "two"`);
    const both = await runVigil(project, ['sequence', 'one', '--resume', id, '--from', 'a']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('does not take --from or --run');
  });
});
