// gate_timeout: at a terminal, a review gate nobody answers applies
// gate_action after that many seconds instead of holding the run.
import { afterEach, describe, expect, it } from 'vitest';
import { findOnPath } from '../../src/paths/which.ts';
import { cliEntry, lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';
import { spawnChild } from '../support/children.ts';
import { scaled } from '../support/time-scale.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('gate_timeout', () => {
  it.runIf(findOnPath('script') !== null)('applies gate_action after gate_timeout in a terminal', async () => {
    project = makeProject();
    project.recipe({
      name: 'gated',
      canary: false,
      steps: [{ label: 'a', args: ['x'], gate: 'review', gate_options: ['approve', 'reject'], gate_action: 'approve', gate_timeout: 1 }],
    });
    // script(1) gives the run a pseudo-terminal, as a person's shell would.
    const child = spawnChild('script', ['-qec', `"${process.execPath}" "${cliEntry}" sequence gated`, '/dev/null'], {
      cwd: project.root,
      env: { ...process.env, HOME: project.home, PATH: `${project.bin}:${process.env.PATH}`, FAKE_LOG: project.log },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(out).toContain('no answer within gate_timeout (1 s): applying gate_action "approve"');
    expect(code, out).toBe(0);
    expect(stepOf(lastRun(project), 'a')).toMatchObject({ status: 'succeeded', gate: { choice: 'approve', chosen_by: 'gate_action' } });
  }, scaled(60_000));

  it('needs gate_action', async () => {
    project = makeProject();
    project.recipe({ name: 'bad', canary: false, steps: [{ label: 'a', args: ['x'], gate: 'review', gate_timeout: 5 }] });
    const r = await runVigil(project, ['sequence', 'bad']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('("a").gate_timeout: needs gate_action');
  });
});
