import { afterEach, describe, expect, it } from 'vitest';
import { lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

const t = (iso: string | null) => Date.parse(iso ?? '');

describe('ordering and parallelism on the step pool', () => {
  it('runs a 20-step, 4-wave recipe in about the time of its longest path, not the sum', async () => {
    project = makeProject();
    project.file('prompts/work.md', 'Work on $PART. SLEEP_MS=700 SAY=DONE\n');
    const steps = Array.from({ length: 20 }, (_, i) => ({
      label: `s${i}`,
      args: ['-p', 'prompts/work.md'],
      wave: Math.floor(i / 5) + 1,
      concurrencySafe: true,
      completion_keyword: 'DONE',
    }));
    project.recipe({ name: 'wide', env: { PART: 'the api' }, canary: false, steps });
    const r = await runVigil(project, ['sequence', 'wide']);
    expect(r.code, r.stderr).toBe(0);
    const run = lastRun(project);
    expect(run.status).toBe('succeeded');
    expect(run.steps.every((s) => s.status === 'succeeded')).toBe(true);

    const sum = run.steps.reduce((acc, s) => acc + (t(s.ended) - t(s.started)), 0);
    const wall = Math.max(...run.steps.map((s) => t(s.ended))) - Math.min(...run.steps.map((s) => t(s.started)));
    // Serial execution would take `sum`; four waves of five take about sum / 5.
    expect(wall).toBeLessThan(sum * 0.5);

    // A wave starts only after the previous wave has ended.
    for (let w = 2; w <= 4; w += 1) {
      const prevEnd = Math.max(...run.steps.filter((s) => s.wave === w - 1).map((s) => t(s.ended)));
      const start = Math.min(...run.steps.filter((s) => s.wave === w).map((s) => t(s.started)));
      expect(start).toBeGreaterThanOrEqual(prevEnd);
    }
  });

  it('skips the dependents of a failed step, still runs independent steps, and exits 1', async () => {
    project = makeProject();
    project.recipe({
      name: 'breaks',
      canary: false,
      steps: [
        { label: 'ok', args: ['fine'], depends_on: [] },
        { label: 'bad', args: ['FAIL'], depends_on: [] },
        { label: 'after-bad', args: ['fine'], depends_on: ['bad'] },
        { label: 'after-after', args: ['fine'], depends_on: ['after-bad'] },
        { label: 'after-ok', args: ['fine'], depends_on: ['ok'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'breaks']);
    expect(r.code).toBe(1);
    const run = lastRun(project);
    expect(run.status).toBe('failed');
    expect(stepOf(run, 'bad').status).toBe('failed');
    expect(stepOf(run, 'bad').reason).toContain('fake failure');
    expect(stepOf(run, 'after-bad').status).toBe('skipped');
    expect(stepOf(run, 'after-after').status).toBe('skipped');
    expect(stepOf(run, 'after-ok').status).toBe('succeeded');
    const ran = project.logEntries().map((e) => e.step);
    expect(ran).not.toContain('after-bad');
    expect(r.stdout).toMatch(/after-bad: skipped/);
  });

  it('runs steps without wave or depends_on in the order written, and unsafe steps of one wave one at a time', async () => {
    project = makeProject();
    project.recipe({
      name: 'ordered',
      canary: false,
      steps: [
        { label: 'first', args: ['SLEEP_MS=200'] },
        { label: 'second', args: ['SLEEP_MS=100'] },
        { label: 'w1', args: ['SLEEP_MS=400'], wave: 5 },
        { label: 'w2', args: ['SLEEP_MS=400'], wave: 5 },
      ],
    });
    const r = await runVigil(project, ['sequence', 'ordered']);
    expect(r.code, r.stderr).toBe(0);
    const run = lastRun(project);
    expect(t(stepOf(run, 'second').started)).toBeGreaterThanOrEqual(t(stepOf(run, 'first').ended));
    const [a, b] = [stepOf(run, 'w1'), stepOf(run, 'w2')].sort((x, y) => t(x.started) - t(y.started));
    expect(t(b!.started)).toBeGreaterThanOrEqual(t(a!.ended));
  });

  it('starts waved steps only after the plain steps written before them', async () => {
    project = makeProject();
    project.recipe({
      name: 'mixed',
      canary: false,
      steps: [
        { label: 'setup', args: ['SLEEP_MS=300'] },
        { label: 'x', args: ['fine'], wave: 1, concurrencySafe: true },
        { label: 'y', args: ['fine'], wave: 1, concurrencySafe: true },
      ],
    });
    const r = await runVigil(project, ['sequence', 'mixed']);
    expect(r.code, r.stderr).toBe(0);
    const run = lastRun(project);
    for (const label of ['x', 'y']) expect(t(stepOf(run, label).started)).toBeGreaterThanOrEqual(t(stepOf(run, 'setup').ended));
  });
});
