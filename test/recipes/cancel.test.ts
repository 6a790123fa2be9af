import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { isAlive, lastRun, makeProject, type Project, runVigil, startVigil, stepOf } from './helpers.ts';
import { untilTrue } from '../support/until.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('cancellation', () => {
  for (const [signal, exit] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 143],
  ] as const) {
    it(`${signal} cancels every running step, kills their process groups, records them cancelled and exits ${exit}`, async () => {
      project = makeProject();
      const pidfiles = ['a', 'b'].map((l) => join(project.root, `${l}.pids`));
      project.recipe({
        name: 'long',
        canary: false,
        steps: [
          { label: 'a', args: [`HANG PIDFILE=${pidfiles[0]}`], wave: 1, concurrencySafe: true },
          { label: 'b', args: [`HANG PIDFILE=${pidfiles[1]}`], wave: 1, concurrencySafe: true },
          { label: 'c', args: ['later'], wave: 2 },
        ],
      });
      const run = startVigil(project, ['sequence', 'long']);
      await untilTrue('both agents to start', () => pidfiles.every((f) => existsSync(f)));
      const pids = pidfiles.map((f) => JSON.parse(readFileSync(f, 'utf8')) as { agent: number; grandchild: number });
      run.child.kill(signal);
      const result = await run.done;
      expect(result.code).toBe(exit);
      for (const p of pids) {
        expect(isAlive(p.agent)).toBe(false);
        expect(isAlive(p.grandchild)).toBe(false);
      }
      const record = lastRun(project);
      expect(record.status).toBe('cancelled');
      expect(stepOf(record, 'a').status).toBe('cancelled');
      expect(stepOf(record, 'b').status).toBe('cancelled');
      expect(stepOf(record, 'c').status).toBe('cancelled');
      expect(project.logEntries().map((e) => e.step)).not.toContain('c');
    });
  }
});

describe('a runner that dies', () => {
  it('takes its agents with it and leaves a run that the next run marks interrupted', async () => {
    project = makeProject();
    const pidfile = join(project.root, 'a.pids');
    project.recipe({ name: 'doomed', canary: false, steps: [{ label: 'a', args: [`HANG PIDFILE=${pidfile}`] }] });
    project.recipe({ name: 'next', canary: false, steps: [{ label: 'b', args: ['fine'] }] });
    const run = startVigil(project, ['sequence', 'doomed']);
    await untilTrue('the agent to start', () => existsSync(pidfile));
    const pids = JSON.parse(readFileSync(pidfile, 'utf8')) as { agent: number; grandchild: number };
    // If this test fails half-way, do not leave the orphaned agent running.
    onTestFinished(() => {
      try {
        process.kill(-pids.agent, 'SIGKILL');
      } catch {
        // already stopped, as expected
      }
    });
    run.child.kill('SIGKILL');
    await run.done;
    // The agent's guard saw the runner's pipe close and killed its group.
    await untilTrue('the agent and its grandchild to be stopped', () => !isAlive(pids.agent) && !isAlive(pids.grandchild));
    const doomedId = lastRun(project).id;

    const next = await runVigil(project, ['sequence', 'next']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain(`run ${doomedId} was interrupted`);
    const listed = await runVigil(project, ['runs']);
    expect(listed.stdout).toMatch(new RegExp(`${doomedId}\\s+doomed\\s+interrupted`));
  });

  it('leaves no run without its record when killed while making it: vigil runs skips the half-made folder, the next run removes it', async () => {
    project = makeProject();
    project.recipe({ name: 'next', canary: false, steps: [{ label: 'b', args: ['fine'] }] });
    const runs = join(project.root, '.vigil', 'runs');
    // What a runner killed between making its record's folder and renaming it into place leaves, and what a live one has.
    const dead = spawnSync('true').pid!;
    const record = (id: string) => JSON.stringify({ id, recipe: 'half', type: 'sequence', status: 'running', pid: dead, started: new Date().toISOString(), steps: [] });
    for (const [name, id] of [[`.20260101-000000-dead.${dead}.new`, '20260101-000000-dead'], [`.20260101-000000-live.${process.pid}.new`, '20260101-000000-live']] as const) {
      mkdirSync(join(runs, name, 'steps'), { recursive: true });
      writeFileSync(join(runs, name, 'run.json'), record(id));
    }

    const listed = await runVigil(project, ['runs']);
    expect(listed.stdout).not.toContain('half');
    const next = await runVigil(project, ['sequence', 'next']);
    expect(next.code, next.stderr).toBe(0);
    const left = readdirSync(runs);
    expect(left).not.toContain(`.20260101-000000-dead.${dead}.new`);
    expect(left).toContain(`.20260101-000000-live.${process.pid}.new`); // its maker may still rename it
    expect(left.filter((n) => !n.startsWith('.'))).toEqual([lastRun(project).id]);
  });
});
