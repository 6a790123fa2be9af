// A runner killed with -9 takes its agents with it: beside each agent's
// process group a watcher shell holds a pipe from the runner, and when that
// pipe closes the watcher kills the whole group. Real processes throughout: a
// custom agent stand-in that reads its prompt, starts a grandchild, writes
// both pids and sleeps; the pids are read from /proc, not from Vigil's records.
import { chmodSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scaled } from '../support/time-scale.ts';
import { until, untilTrue } from '../support/until.ts';
import { makeProject, type Project, startVigil, type VigilProcess } from './helpers.ts';

let project: Project | undefined;
let runner: VigilProcess | undefined;
const started: number[] = [];

afterEach(() => {
  if (runner && runner.child.exitCode === null && runner.child.signalCode === null) runner.child.kill('SIGKILL');
  // If the watcher failed, do not leave the agents running.
  for (const pid of started.splice(0))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone, as expected
    }
  project?.cleanup();
  project = undefined;
  runner = undefined;
});

/** Running, in /proc: a pid that is gone or a zombie waiting for its reaper no longer runs. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

interface AgentPids {
  agent: number;
  grandchild: number;
  promptBytes: number;
}

describe('a runner killed with -9', () => {
  it('takes every agent of a parallel of 2 with it, and the grandchildren they started', async () => {
    project = makeProject();
    const pids = join(project.root, '.pids');
    const agent = project.file(
      'stand-in.sh',
      `#!/bin/sh
prompt=$(cat)
sleep 600 &
mkdir -p '${pids}'
printf '{"agent":%s,"grandchild":%s,"promptBytes":%s}' "$$" "$!" "\${#prompt}" > '${pids}/'"$$.partial"
mv '${pids}/'"$$.partial" '${pids}/'"$$.json"
sleep 600
`,
    );
    chmodSync(agent, 0o755);
    project.yml(`providers:\n  stand-in:\n    type: custom\n    command: ${agent}\n`);
    project.recipe({ name: 'one', canary: false, steps: [{ label: 'work', backend: 'stand-in', prompt: 'work on part $N' }] });
    project.recipe({ name: 'fan', type: 'parallel', recipe: 'one', fanout: 2, vars: [{ N: '0' }, { N: '1' }] });
    runner = startVigil(project, ['sequence', 'fan']);
    runner.child.stdin!.end();
    const agents = await until(
      () => `both agents to write their pids; stdout:\n${runner?.stdout()}\nstderr:\n${runner?.stderr()}`,
      () => {
        const files = existsSync(pids) ? readdirSync(pids).filter((f) => f.endsWith('.json')) : [];
        return files.length === 2 ? files.map((f) => JSON.parse(readFileSync(join(pids, f), 'utf8')) as AgentPids) : undefined;
      },
    );
    for (const a of agents) started.push(a.agent, a.grandchild);
    // The prompt still reaches the agent on its stdin.
    for (const a of agents) expect(a.promptBytes).toBeGreaterThan(0);
    for (const pid of started) expect(running(pid)).toBe(true);

    runner.child.kill('SIGKILL');
    await runner.done;
    await untilTrue(
      () => `every agent and grandchild to be gone; still running: ${started.filter(running).join(', ')}`,
      () => started.every((pid) => !running(pid)),
      scaled(10_000),
    );
  }, scaled(60_000));
});
