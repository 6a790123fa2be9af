// SIGHUP and a second SIGINT leave no agents and no run marked "running";
// a grandchild that left the process group with setsid is killed too.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, lastRun, makeProject, type Project, runVigil, startVigil, stepOf } from './helpers.ts';
import { scaled } from '../support/time-scale.ts';
import { untilTrue } from '../support/until.ts';

let project: Project;
afterEach(() => project?.cleanup());

type Pids = { agent: number; grandchild: number; escaped: number };
const readPids = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Pids;
const allDead = (p: Pids) => [p.agent, p.grandchild, p.escaped].every((pid) => !isAlive(pid));

describe('signals and escaped children', () => {
  it('SIGHUP cancels the run and kills its agents, including one that left its group with setsid', async () => {
    project = makeProject();
    const pidfile = join(project.root, 'a.pids');
    project.recipe({ name: 'hup', canary: false, steps: [{ label: 'a', args: [`HANG ESCAPE PIDFILE=${pidfile}`] }] });
    const run = startVigil(project, ['sequence', 'hup']);
    await untilTrue('the agent to start', () => existsSync(pidfile));
    const pids = readPids(pidfile);
    run.child.kill('SIGHUP');
    const result = await run.done;
    // SIGHUP cancels like SIGTERM (recipes-and-sdk.md §0): 143.
    expect(result.code).toBe(143);
    await untilTrue('the agent, its grandchild and the escaped one to die', () => allDead(pids));
    expect(lastRun(project).status).toBe('cancelled');
    expect(stepOf(lastRun(project), 'a').status).toBe('cancelled');
  }, scaled(60_000));

  it('a second SIGINT records the run cancelled (not running) and kills everything at once', async () => {
    project = makeProject();
    const pidfile = join(project.root, 'a.pids');
    project.recipe({ name: 'twice', canary: false, steps: [{ label: 'a', args: [`HANG ESCAPE PIDFILE=${pidfile}`] }, { label: 'b', args: ['later'], depends_on: ['a'] }] });
    const run = startVigil(project, ['sequence', 'twice']);
    await untilTrue('the agent to start', () => existsSync(pidfile));
    const pids = readPids(pidfile);
    run.child.kill('SIGINT');
    await run.waitFor(/cancelling the run/);
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(result.code).toBe(130);
    await untilTrue('every process of the step to die', () => allDead(pids));
    const record = lastRun(project);
    expect(record.status).toBe('cancelled');
    expect(record.reason).toBe('killed by a second SIGINT');
    expect(record.steps.map((s) => s.status)).not.toContain('running');
  }, scaled(60_000));

  it('the watchdog kills a grandchild that escaped the process group with setsid', async () => {
    project = makeProject();
    const pidfile = join(project.root, 'a.pids');
    project.recipe({ name: 'escape', canary: false, steps: [{ label: 'a', args: [`HANG ESCAPE PIDFILE=${pidfile}`], timeout: 3 }] });
    const r = await runVigil(project, ['sequence', 'escape']);
    expect(r.code).toBe(1);
    expect(stepOf(lastRun(project), 'a').killed_by).toBe('timeout');
    const pids = readPids(pidfile);
    await untilTrue('the escaped grandchild to die', () => allDead(pids));
  }, scaled(60_000));
});
