import { afterEach, describe, expect, it } from 'vitest';
import { cliEntry, lastRun, makeProject, type Project, runVigil, startVigil, stepOf } from './helpers.ts';
import { spawnChild } from '../support/children.ts';

let project: Project;
afterEach(() => project?.cleanup());

const gated = (extra: Record<string, unknown> = {}) => ({
  name: 'reviewed',
  canary: false,
  steps: [
    { label: 'draft', args: ['write the draft'], gate: 'review', gate_options: ['approve', 'reject'], ...extra },
    { label: 'publish', args: ['publish it'], depends_on: ['draft'] },
  ],
});

describe('review gates', () => {
  it('pauses until `vigil gate … approve` from another terminal, then continues', async () => {
    project = makeProject();
    project.recipe(gated());
    const run = startVigil(project, ['sequence', 'reviewed']);
    const [, runId] = await run.waitFor(/answer with: vigil gate (\S+) draft/);
    expect(stepOf(lastRun(project), 'draft').status).toBe('awaiting_gate');
    expect(project.logEntries().map((e) => e.step)).not.toContain('publish');

    const answer = await runVigil(project, ['gate', runId!, 'draft', 'approve']);
    expect(answer.code, answer.stderr).toBe(0);
    const result = await run.done;
    expect(result.code).toBe(0);
    const record = lastRun(project);
    expect(stepOf(record, 'draft').gate).toMatchObject({ choice: 'approve', chosen_by: 'command' });
    expect(stepOf(record, 'publish').status).toBe('succeeded');
  });

  it('fails the step and skips its dependents when the reviewer rejects', async () => {
    project = makeProject();
    project.recipe(gated());
    const run = startVigil(project, ['sequence', 'reviewed']);
    const [, runId] = await run.waitFor(/answer with: vigil gate (\S+) draft/);
    const bad = await runVigil(project, ['gate', runId!, 'draft', 'maybe']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('options: approve, reject');
    await runVigil(project, ['gate', runId!, 'draft', 'reject']);
    const result = await run.done;
    expect(result.code).toBe(1);
    const record = lastRun(project);
    expect(stepOf(record, 'draft').status).toBe('failed');
    expect(stepOf(record, 'draft').reason).toContain('rejected at the review gate');
    expect(stepOf(record, 'publish').status).toBe('skipped');
  });

  it('runs the step again when the reviewer asks for a retry', async () => {
    project = makeProject();
    project.recipe(gated({ gate_options: ['approve', 'retry'] }));
    const run = startVigil(project, ['sequence', 'reviewed']);
    const [, runId] = await run.waitFor(/answer with: vigil gate (\S+) draft/);
    await runVigil(project, ['gate', runId!, 'draft', 'retry']);
    await run.waitFor(/answer with: vigil gate \S+ draft[\s\S]*answer with: vigil gate \S+ draft/);
    await runVigil(project, ['gate', runId!, 'draft', 'approve']);
    expect((await run.done).code).toBe(0);
    expect(project.logEntries().filter((e) => e.step === 'draft')).toHaveLength(2);
    expect(stepOf(lastRun(project), 'draft').gate).toMatchObject({ choice: 'approve' });
  });

  it('applies gate_action at once when the run has no terminal', async () => {
    project = makeProject();
    project.recipe(gated({ gate_options: ['ship', 'stop'], gate_action: 'ship' }));
    const r = await runVigil(project, ['sequence', 'reviewed']);
    expect(r.code, r.stderr).toBe(0);
    const record = lastRun(project);
    expect(stepOf(record, 'draft').gate).toMatchObject({ choice: 'ship', chosen_by: 'gate_action' });
    expect(stepOf(record, 'publish').status).toBe('succeeded');
  });

  it('asks at the terminal prompt when the run has one', async () => {
    project = makeProject();
    project.recipe(gated({ gate_options: ['ship', 'stop'], gate_action: 'ship' }));
    // `script` gives the run a pseudo-terminal; we answer "stop" at the prompt.
    const child = spawnChild('script', ['-qfec', `${process.execPath} ${cliEntry} sequence reviewed`, '/dev/null'], {
      cwd: project.root,
      env: { ...process.env, HOME: project.home, PATH: `${project.bin}:${process.env.PATH}`, FAKE_LOG: project.log },
    });
    let out = '';
    let answered = false;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (!answered && out.includes('Review gate for "draft"')) {
        answered = true;
        child.stdin.write('stop\r');
      }
    });
    const code = await new Promise<number | null>((res) => child.on('close', res));
    expect(out).toContain('choose ship / stop [ship]');
    // The terminal live view: one line per step with its state.
    expect(out).toMatch(/draft\s+awaiting_gate/);
    expect(out).toMatch(/publish\s+pending/);
    expect(code).toBe(1);
    expect(stepOf(lastRun(project), 'draft').gate).toMatchObject({ choice: 'stop', chosen_by: 'terminal' });
  });
});
