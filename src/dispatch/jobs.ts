// Dispatch jobs in the project's .vigil/vigil.db (table dispatch_jobs):
// queued → running → succeeded | failed | cancelled. Each state change is one
// guarded UPDATE, so two runners never run the same job. A running job names
// its runner (pid and host): one whose runner is gone (killed with -9, the
// machine restarted) is failed as interrupted when it is next read, where it
// would have stayed running for ever.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { processAlive } from '../file-lock/process-alive.ts';
import { confined } from '../workspace/confine.ts';

const require = createRequire(import.meta.url);

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface DispatchJob {
  id: string;
  tool: string;
  source: string;
  params: Record<string, unknown>;
  status: JobStatus;
  attempts: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  result?: unknown;
  error?: string;
}

interface Row {
  id: string;
  tool: string;
  source: string;
  params: string;
  status: JobStatus;
  attempts: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  result: string | null;
  error: string | null;
}

const dbs = new Map<string, BetterSqlite3.Database>();

function db(projectRoot: string): BetterSqlite3.Database {
  const path = confined(projectRoot, join('.vigil', 'vigil.db'), 'vigil.db', 'the project');
  let d = dbs.get(path);
  if (!d) {
    mkdirSync(join(projectRoot, '.vigil'), { recursive: true });
    const Database = require('better-sqlite3') as typeof BetterSqlite3;
    d = new Database(path);
    d.pragma('journal_mode = WAL');
    d.pragma('busy_timeout = 5000');
    d.exec(`CREATE TABLE IF NOT EXISTS dispatch_jobs (
      id TEXT PRIMARY KEY, tool TEXT NOT NULL, source TEXT NOT NULL, params TEXT NOT NULL, status TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, result TEXT, error TEXT)`);
    d.exec('CREATE INDEX IF NOT EXISTS dispatch_jobs_status ON dispatch_jobs (status, created_at)');
    // Files made before jobs named their runner get the columns; their running jobs cannot be judged and stay as they are.
    const columns = new Set((d.prepare('PRAGMA table_info(dispatch_jobs)').all() as Array<{ name: string }>).map((c) => c.name));
    if (!columns.has('runner_pid')) d.exec('ALTER TABLE dispatch_jobs ADD COLUMN runner_pid INTEGER');
    if (!columns.has('runner_host')) d.exec('ALTER TABLE dispatch_jobs ADD COLUMN runner_host TEXT');
    dbs.set(path, d);
  }
  return d;
}

function toJob(r: Row): DispatchJob {
  const job: DispatchJob = {
    id: r.id,
    tool: r.tool,
    source: r.source,
    params: JSON.parse(r.params),
    status: r.status,
    attempts: r.attempts,
    created_at: r.created_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
  };
  if (r.result !== null) job.result = JSON.parse(r.result);
  if (r.error !== null) job.error = r.error;
  return job;
}

export function enqueueJob(projectRoot: string, tool: string, source: string, params: Record<string, unknown>): DispatchJob {
  const id = `job_${randomUUID()}`;
  db(projectRoot)
    .prepare("INSERT INTO dispatch_jobs (id, tool, source, params, status, created_at) VALUES (?, ?, ?, ?, 'queued', ?)")
    .run(id, tool, source, JSON.stringify(params), new Date().toISOString());
  return getJob(projectRoot, id)!;
}

export function getJob(projectRoot: string, id: string): DispatchJob | null {
  failInterrupted(projectRoot);
  const r = db(projectRoot).prepare('SELECT * FROM dispatch_jobs WHERE id = ?').get(id) as Row | undefined;
  return r ? toJob(r) : null;
}

export function queuedJobIds(projectRoot: string): string[] {
  failInterrupted(projectRoot);
  return (db(projectRoot).prepare("SELECT id FROM dispatch_jobs WHERE status = 'queued' ORDER BY created_at").all() as Array<{ id: string }>).map((r) => r.id);
}

/** queued → running, naming this process as its runner; false when another runner took it first. */
export function claimJob(projectRoot: string, id: string): boolean {
  const r = db(projectRoot)
    .prepare("UPDATE dispatch_jobs SET status = 'running', attempts = attempts + 1, started_at = ?, runner_pid = ?, runner_host = ? WHERE id = ? AND status = 'queued'")
    .run(new Date().toISOString(), process.pid, hostname(), id);
  return r.changes === 1;
}

/**
 * Running jobs whose runner on this machine no longer runs: failed, saying so. Not queued again: the tool
 * may have done part of its work, and only the sender knows whether running it twice is safe.
 */
function failInterrupted(projectRoot: string): void {
  const d = db(projectRoot);
  const running = d.prepare("SELECT id, runner_pid, runner_host FROM dispatch_jobs WHERE status = 'running' AND runner_pid IS NOT NULL").all() as Array<{
    id: string;
    runner_pid: number;
    runner_host: string;
  }>;
  const host = hostname();
  for (const job of running) {
    if (job.runner_host !== host || processAlive(job.runner_pid)) continue;
    d.prepare("UPDATE dispatch_jobs SET status = 'failed', finished_at = ?, error = ? WHERE id = ? AND status = 'running' AND runner_pid = ?").run(
      new Date().toISOString(),
      `interrupted: its runner (pid ${job.runner_pid}) ended before the job did (killed, or the machine restarted); the tool may have done part of its work. Send the job again to run it again`,
      job.id,
      job.runner_pid,
    );
  }
}

export function finishJob(projectRoot: string, id: string, outcome: { result: unknown } | { error: string }): void {
  const ok = 'result' in outcome;
  db(projectRoot)
    .prepare("UPDATE dispatch_jobs SET status = ?, finished_at = ?, result = ?, error = ? WHERE id = ? AND status = 'running'")
    .run(ok ? 'succeeded' : 'failed', new Date().toISOString(), ok ? JSON.stringify(outcome.result ?? null) : null, ok ? null : outcome.error, id);
}
