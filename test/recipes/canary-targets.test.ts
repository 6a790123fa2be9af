// The canary checks every distinct backend, auth profile and model of a run.
import { afterEach, describe, expect, it } from 'vitest';
import { makeProject, type Project, runVigil } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

const canaryCalls = (p: Project) => p.logEntries().filter((e) => String(e.prompt).includes('connectivity check'));

describe('canary', () => {
  it('checks a later step\'s backend too: a codex that is not logged in stops the run before the claude step', async () => {
    project = makeProject({ codex: true });
    project.recipe({
      name: 'mixed',
      steps: [
        { label: 'plan', args: ['make a plan'], backend: 'claude' },
        { label: 'code', args: ['write it'], backend: 'codex', depends_on: ['plan'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'mixed'], { FAKE_CODEX_CANARY: 'fail' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('canary for backend "codex" failed: codex exited with code 1: error: not logged in; run codex login');
    expect(r.stderr).toContain('(it serves steps code)');
    expect(project.logEntries().filter((e) => !String(e.prompt).includes('connectivity check'))).toEqual([]);
  });

  it('checks each distinct model once', async () => {
    project = makeProject();
    project.recipe({
      name: 'models',
      steps: [
        { label: 'a', args: ['x'], model: 'claude-opus-4-1', depends_on: [] },
        { label: 'b', args: ['y'], model: 'claude-opus-4-1', depends_on: [] },
        { label: 'c', args: ['z'], model: 'claude-haiku-4-5', depends_on: [] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'models']);
    expect(r.code, r.stderr).toBe(0);
    const models = canaryCalls(project).map((e) => {
      const argv = e.argv as string[];
      return argv[argv.indexOf('--model') + 1];
    });
    expect(models.sort()).toEqual(['claude-haiku-4-5', 'claude-opus-4-1']);
  });
});
