// When a runner dies without cleaning up (SIGKILL, power loss), its run.json
// still says "running" and its agents may still run, detached in their own
// process groups. The next run of the project marks such runs interrupted
// and stops every process that carries the run's VIGIL_RUN_ID in its
// environment (read through /proc), so a reused pid is never killed.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../json/json-file.ts';
import { readRunJson, runsDir, stagingMaker } from './run-record.ts';
import { processAlive } from '../../file-lock/process-alive.ts';

export interface ReapedRun {
  runId: string;
  killed: number[];
}

function carriesRunId(pid: string, runId: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`VIGIL_RUN_ID=${runId}`);
  } catch {
    return false; // gone, or not ours to read
  }
}

/** Kills every process that carries the run id in its environment: the agents and whatever they started. */
function killProcessesOfRun(runId: string): number[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return [];
  }
  const killed: number[] = [];
  for (const pid of pids) {
    if (Number(pid) === process.pid || !carriesRunId(pid, runId)) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
      killed.push(Number(pid));
    } catch {
      // already gone
    }
  }
  return killed;
}

export function reapInterruptedRuns(projectRoot: string): ReapedRun[] {
  const reaped: ReapedRun[] = [];
  let ids: string[];
  try {
    ids = readdirSync(runsDir(projectRoot));
  } catch {
    return reaped;
  }
  for (const id of ids) {
    const dir = join(runsDir(projectRoot), id);
    const maker = stagingMaker(id);
    if (maker !== null) {
      // A record that was being made when its runner died: it never became a run.
      if (!processAlive(maker)) rmSync(dir, { recursive: true, force: true });
      continue;
    }
    let run: ReturnType<typeof readRunJson>;
    try {
      run = readRunJson(dir);
    } catch {
      continue;
    }
    if (run.status !== 'running' || processAlive(run.pid)) continue;
    const killed = killProcessesOfRun(run.id);
    for (const step of run.steps) {
      if (step.status === 'running' || step.status === 'awaiting_gate' || step.status === 'pending') {
        step.status = 'cancelled';
        step.reason = 'the runner died before this step ended';
      }
    }
    run.status = 'interrupted';
    run.reason = `the runner (pid ${run.pid}) died`;
    writeJsonAtomic(join(dir, 'run.json'), run);
    reaped.push({ runId: run.id, killed });
  }
  return reaped;
}
