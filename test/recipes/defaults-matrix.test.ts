// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} in these strings is vigil's own variable syntax, substituted by the runner
import { afterEach, describe, expect, it } from 'vitest';
import { makeShProject, rootRun } from './composite-helpers.ts';
import { customProvider, lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('recipe defaults, inline prompts and matrix', () => {
  it('fills defaults into steps that do not set their own, and runs an inline prompt with its variables', async () => {
    project = makeProject();
    customProvider(project);
    project.recipe({
      name: 'defs',
      canary: false,
      env: { WHO: 'the api' },
      defaults: { backend: 'fake', model: 'default-model', timeout: 120 },
      steps: [
        { label: 'inline', prompt: 'Review $WHO carefully.\nSAY=DONE' },
        { label: 'own', prompt: 'Own model for ${WHO}.', model: 'special-model', backend: 'claude' },
        { label: 'both', args: ['--flag-for-agent'], prompt: 'Both for $WHO' },
      ],
    });
    const r = await runVigil(project, ['sequence', 'defs']);
    expect(r.code, r.stderr).toBe(0);
    const calls = project.logEntries();
    const inline = calls.find((c) => c.step === 'inline')!;
    expect(inline.agent).toBe('custom');
    expect(inline.prompt).toBe('Review the api carefully.\nSAY=DONE');
    expect((inline.settings as { model: string }).model).toBe('default-model');
    // A custom program gets the inline prompt as a prompt file, like one written in args.
    expect((inline.promptFiles as Array<{ text: string }>)[0]!.text).toBe('Review the api carefully.\nSAY=DONE');
    const own = calls.find((c) => c.step === 'own')!;
    expect(own.agent).toBe('claude');
    expect(own.prompt).toBe('Own model for the api.');
    expect(own.argv as string[]).toContain('special-model');
    const both = calls.find((c) => c.step === 'both')!;
    expect((both.argv as string[])[0]).toBe('--flag-for-agent');
    expect(both.prompt).toBe('Both for the api');
    expect(stepOf(lastRun(project), 'own').backend).toBe('claude');
  });

  it('refuses a step with neither args nor prompt, and a variable of an inline prompt set nowhere', async () => {
    project = makeProject();
    project.recipe({ name: 'empty', canary: false, steps: [{ label: 'nothing' }] });
    const r = await runVigil(project, ['sequence', 'empty']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('steps[0] ("nothing"): needs "args", "prompt" or both');
    project.recipe({ name: 'unset', canary: false, steps: [{ label: 'p', prompt: 'uses $NOPE' }] });
    const s = await runVigil(project, ['sequence', 'unset']);
    expect(s.code).toBe(2);
    expect(s.stderr).toContain('steps "p".prompt: variable $NOPE is set nowhere');
  });

  it('expands a parallel matrix to its product, minus exclude, plus include', async () => {
    project = makeShProject();
    project.recipe({ name: 'one', canary: false, steps: [{ label: 'work', args: ['echo ${OS}-${NODE}${EXTRA:-} > out-${OS}-${NODE}.txt'] }] });
    project.recipe({
      name: 'grid',
      type: 'parallel',
      recipe: 'one',
      matrix: { OS: ['linux', 'mac'], NODE: [20, 22], exclude: [{ OS: 'mac', NODE: 20 }], include: [{ OS: 'linux', NODE: 22, EXTRA: '-lts' }, { OS: 'bsd', NODE: 18 }] },
    });
    const r = await runVigil(project, ['sequence', 'grid']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = rootRun(project);
    expect(run.children!.map(({ vars: { PARALLEL_INDEX: _i, PARALLEL_COUNT: _c, ...own } }) => own)).toEqual([
      { OS: 'linux', NODE: '20' },
      { OS: 'linux', NODE: '22', EXTRA: '-lts' },
      { OS: 'mac', NODE: '22' },
      { OS: 'bsd', NODE: '18' },
    ]);
    expect(run.children!.every((c) => c.status === 'succeeded')).toBe(true);
  });

  it('refuses a matrix that is too large or excludes by an unknown variable', async () => {
    project = makeShProject({ git: false });
    project.recipe({ name: 'one', canary: false, steps: [{ label: 'work', args: ['true'] }] });
    const big = Array.from({ length: 20 }, (_, i) => String(i));
    project.recipe({ name: 'huge', type: 'parallel', recipe: 'one', matrix: { A: big, B: big } });
    const r = await runVigil(project, ['sequence', 'huge']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('matrix: A (20) × B (20) makes 400 combinations; at most 256');
    project.recipe({ name: 'typo', type: 'parallel', recipe: 'one', matrix: { A: ['x'], exclude: [{ B: 'y' }] } });
    const s = await runVigil(project, ['sequence', 'typo']);
    expect(s.code).toBe(2);
    expect(s.stderr).toContain('matrix: exclude[0]: B is not a variable of the matrix (A)');
  });
});
