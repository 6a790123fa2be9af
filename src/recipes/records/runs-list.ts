// Lists recorded runs, newest first. A run still marked "running" whose
// process is gone is reported as interrupted (it crashed or was killed).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type RunJson, readRunJson, runsDir } from './run-record.ts';
import { processAlive } from '../../file-lock/process-alive.ts';

export interface ListedRun extends RunJson {
  shownStatus: string;
}


/** True while the run's runner process is still at work (another `vigil sequence` in the same project). */
export function runIsLive(projectRoot: string, runId: string): boolean {
  try {
    const run = readRunJson(join(runsDir(projectRoot), runId));
    return run.status === 'running' && processAlive(run.pid);
  } catch {
    return false;
  }
}

/** The steps of a running run (and of its child runs) that wait for a slot: `child 2 › build: waiting for a claude slot: …`. */
export function waitingSteps(projectRoot: string, run: RunJson, prefix = ''): string[] {
  if (run.status !== 'running' || !processAlive(run.pid)) return [];
  const out = run.steps.filter((s) => s.slot_wait).map((s) => `${prefix}${s.label}: ${s.slot_wait}`);
  for (const c of run.children ?? []) {
    if (!c.run_id || c.status !== 'running') continue;
    try {
      out.push(...waitingSteps(projectRoot, readRunJson(join(runsDir(projectRoot), c.run_id)), `${prefix}${c.role} › `));
    } catch {
      // its record is being written
    }
  }
  return out;
}

export function listRuns(projectRoot: string): ListedRun[] {
  const dir = runsDir(projectRoot);
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  const runs: ListedRun[] = [];
  for (const entry of entries) {
    if (entry.startsWith('.')) continue; // a record being made (run-record.ts stagingName)
    try {
      const run = readRunJson(join(dir, entry));
      const shownStatus = run.status === 'running' && !processAlive(run.pid) ? 'interrupted' : run.status;
      runs.push({ ...run, shownStatus });
    } catch {
      // not a run directory
    }
  }
  return runs.sort((a, b) => (a.started < b.started ? 1 : a.started > b.started ? -1 : b.id.localeCompare(a.id)));
}
