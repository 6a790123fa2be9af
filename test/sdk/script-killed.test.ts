// A script killed by SIGKILL cannot cancel what it started: the run it started
// through sdk.sequence.run notices its starter is gone and cancels itself.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnChild } from '../support/children.ts';
import { scaled } from '../support/time-scale.ts';
import { until, untilTrue } from '../support/until.ts';
import { cliEntry, makeSdkProject, projectEnv, repoRoot, type SdkProject } from './helpers.ts';

const agent = join(repoRoot, 'test', 'fakes', 'fake-agent.mjs');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function kill(pid: number | undefined): void {
  try {
    if (pid) process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

let project: SdkProject;
/** What the kill orphans: no longer below any process this test started, so test/support/cleanup.ts cannot find it. */
const orphans: number[] = [];
beforeEach(() => {
  project = makeSdkProject();
});
afterEach(() => {
  for (const pid of orphans.splice(0)) kill(pid);
  project.cleanup();
});

describe('a script killed with SIGKILL', () => {
  it('leaves no run going: the run it started cancels itself and stops its agent', async () => {
    const pidFile = join(project.root, 'agent.pid');
    project.file('vigil.yml', `providers:\n  fake:\n    type: custom\n    command: ${agent}\n`);
    project.file('.vigil/recipes/slow.json', JSON.stringify({ name: 'slow', canary: false, steps: [{ label: 'wait', backend: 'fake', args: [`HANG PIDFILE=${pidFile}`] }] }));
    project.script('slow.js', `return sdk.sequence.run('slow');`);
    const script = spawnChild(process.execPath, [cliEntry, 'script', 'run', 'slow'], { cwd: project.root, env: projectEnv(project), stdio: 'ignore' });
    const runs = join(project.root, '.vigil', 'runs');
    const pids = await until('the agent to start', () => (existsSync(pidFile) ? (JSON.parse(readFileSync(pidFile, 'utf8')) as { agent: number; grandchild: number }) : undefined));
    const runDir = join(runs, readdirSync(runs)[0]!);
    const readRun = (): { pid: number; status: string; reason?: string } => JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'));
    const runner = readRun().pid;
    orphans.push(runner, pids.agent, pids.grandchild);
    // The runner is a process of its own, not the script.
    expect(runner).not.toBe(script.pid);
    const exited = new Promise((done) => script.once('exit', done));
    script.kill('SIGKILL');
    await exited;
    // Within the test's own limit, so that a run that goes on fails here and afterEach stops it.
    await untilTrue(() => `the run to end (it is ${readRun().status})`, () => readRun().status !== 'running', scaled(20_000));
    expect(readRun()).toMatchObject({ status: 'cancelled', reason: 'the run was cancelled: the process that started it ended' });
    await untilTrue('the runner and the agent to be gone', () => !alive(runner) && !alive(pids.agent) && !alive(pids.grandchild), scaled(20_000));
  });
});
