// Many concurrent steps, and `vigil sequence … | head`.
import { afterEach, describe, expect, it } from 'vitest';
import { cliEntry, lastRun, makeProject, type Project, runVigil } from './helpers.ts';
import { spawnChild } from '../support/children.ts';
import { scaled } from '../support/time-scale.ts';

let project: Project;
afterEach(() => project?.cleanup());

const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `s${i}`, args: ['TURNS=2'], depends_on: [] }));

describe('many steps', () => {
  it('runs 14 concurrent steps without a MaxListenersExceededWarning', async () => {
    project = makeProject();
    project.recipe({ name: 'wide', canary: false, steps: steps(14) });
    const r = await runVigil(project, ['sequence', 'wide']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('MaxListenersExceededWarning');
    expect(r.stderr).not.toContain('Warning');
  }, scaled(120_000));

  it('runs a parallel of 20 children at once without a MaxListenersExceededWarning', async () => {
    project = makeProject();
    project.recipe({ name: 'one', canary: false, steps: steps(1) });
    project.recipe({ name: 'fan', type: 'parallel', recipe: 'one', fanout: 20, vars: Array.from({ length: 20 }, (_, i) => ({ N: String(i) })) });
    const r = await runVigil(project, ['sequence', 'fan']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/child 19: succeeded/);
    expect(r.stderr).not.toContain('Warning');
  }, scaled(120_000));

  it('ends quietly when its reader goes away (vigil sequence … | head -n 1)', async () => {
    project = makeProject();
    project.recipe({ name: 'piped', canary: false, steps: steps(4) });
    const child = spawnChild('sh', ['-c', `"${process.execPath}" "${cliEntry}" sequence piped | head -n 1`], {
      cwd: project.root,
      env: { ...process.env, HOME: project.home, PATH: `${project.bin}:${process.env.PATH}`, FAKE_LOG: project.log },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    await new Promise((done) => child.once('exit', done));
    expect(err).not.toContain('EPIPE');
    expect(err).not.toMatch(/at \S+ \(node:/);
    // The run went on without its reader and recorded every step.
    expect(lastRun(project).status).toBe('succeeded');
  }, scaled(120_000));
});
