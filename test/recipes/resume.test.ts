import { afterEach, describe, expect, it } from 'vitest';
import { lastRun, makeProject, type Project, runsOf, runVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('resume with --from', () => {
  it('re-runs from a step, reusing the steps that already succeeded', async () => {
    project = makeProject();
    project.file('prompts/test.md', 'run the tests $MODE\n');
    project.recipe({
      name: 'pipeline',
      canary: false,
      steps: [
        { label: 'prepare', args: ['prepare'] },
        { label: 'side', args: ['side work'], depends_on: [] },
        { label: 'test', args: ['-p', 'prompts/test.md'], depends_on: ['prepare'] },
        { label: 'ship', args: ['ship'], depends_on: ['test'] },
      ],
    });
    const first = await runVigil(project, ['sequence', 'pipeline', '--var', 'MODE=FAIL']);
    expect(first.code).toBe(1);
    const failed = lastRun(project);
    expect(stepOf(failed, 'test').status).toBe('failed');
    expect(stepOf(failed, 'ship').status).toBe('skipped');

    const before = project.logEntries().length;
    const second = await runVigil(project, ['sequence', 'pipeline', '--from', 'test', '--var', 'MODE=quick']);
    expect(second.code, second.stderr).toBe(0);
    const resumed = lastRun(project);
    expect(resumed.id).not.toBe(failed.id);
    expect(resumed.resumed_from).toBe(failed.id);
    expect(stepOf(resumed, 'prepare').status).toBe('reused');
    expect(stepOf(resumed, 'side').status).toBe('reused');
    expect(stepOf(resumed, 'test').status).toBe('succeeded');
    expect(stepOf(resumed, 'ship').status).toBe('succeeded');
    const ranAgain = project.logEntries().slice(before).map((e) => e.step);
    expect(ranAgain.sort()).toEqual(['ship', 'test']);
  });

  it('refuses --from with a label the recipe does not have, or with no earlier run', async () => {
    project = makeProject();
    project.recipe({ name: 'short', canary: false, steps: [{ label: 'only', args: ['x'] }] });
    const none = await runVigil(project, ['sequence', 'short', '--from', 'only']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no earlier run to resume');
    const unknown = await runVigil(project, ['sequence', 'short', '--from', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('has no step "nope"; steps: only');
    expect(runsOf(project)).toEqual([]);
  });

  it('lists runs with `vigil runs`, newest first', async () => {
    project = makeProject();
    project.recipe({ name: 'tiny', canary: false, steps: [{ label: 'only', args: ['x'] }] });
    await runVigil(project, ['sequence', 'tiny']);
    await runVigil(project, ['sequence', 'tiny']);
    const ids = runsOf(project).map((r) => r.id);
    const r = await runVigil(project, ['runs']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toContain(ids[1]);
    expect(lines[1]).toMatch(new RegExp(`${ids[0]}\\s+tiny\\s+succeeded`));
    const one = await runVigil(project, ['runs', ids[0]!]);
    expect(one.stdout).toMatch(/only\s+succeeded/);
  });
});
