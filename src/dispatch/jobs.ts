// Dispatch jobs in the project's .vigil/vigil.db (table dispatch_jobs):
// queued → running → succeeded | failed | cancelled. Each state change is one
// guarded UPDATE, so two runners never run the same job.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
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
  const r = db(projectRoot).prepare('SELECT * FROM dispatch_jobs WHERE id = ?').get(id) as Row | undefined;
  return r ? toJob(r) : null;
}

export function queuedJobIds(projectRoot: string): string[] {
  return (db(projectRoot).prepare("SELECT id FROM dispatch_jobs WHERE status = 'queued' ORDER BY created_at").all() as Array<{ id: string }>).map((r) => r.id);
}

/** queued → running; false when another runner took it first. */
export function claimJob(projectRoot: string, id: string): boolean {
  const r = db(projectRoot)
    .prepare("UPDATE dispatch_jobs SET status = 'running', attempts = attempts + 1, started_at = ? WHERE id = ? AND status = 'queued'")
    .run(new Date().toISOString(), id);
  return r.changes === 1;
}

export function finishJob(projectRoot: string, id: string, outcome: { result: unknown } | { error: string }): void {
  const ok = 'result' in outcome;
  db(projectRoot)
    .prepare("UPDATE dispatch_jobs SET status = ?, finished_at = ?, result = ?, error = ? WHERE id = ? AND status = 'running'")
    .run(ok ? 'succeeded' : 'failed', new Date().toISOString(), ok ? JSON.stringify(outcome.result ?? null) : null, ok ? null : outcome.error, id);
}
