// A state file written by an older Vigil opens with everything in it: the
// store upgrades its tables once (schema.ts) and the server carries on from
// where the file left off. The older file is made here the way the older
// version laid it out (schema 1: observations in a WITHOUT ROWID table, each
// lease's whole record as JSON).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OperationName } from '../../src/service/operations.ts';
import { MonitorService } from '../../src/service/service.ts';
import { leaseRecordOf } from '../../src/store/lease-record-text.ts';
import { qb } from '../../src/store/query-builder.ts';
import { applySchema, schemaVersion } from '../../src/store/schema.ts';
import { openSqlDriver } from '../../src/store/sql-driver.ts';
import { Store } from '../../src/store/store.ts';
import { createTable, tableDefinitions } from '../../src/store/table-definitions.ts';
import { tempDir } from '../support/server-process.ts';
import { replyOf } from '../support/invoke-reply.ts';

let service: MonitorService | undefined;
afterEach(() => {
  service?.close();
  service = undefined;
});

function open(path: string): MonitorService {
  service?.close();
  service = new MonitorService({ store: Store.open({ path }), log: () => {} });
  return service;
}

async function run(name: OperationName, input: Record<string, unknown>, bearer?: string): Promise<any> {
  return replyOf(service!, name, input, bearer);
}

/** Rewrites the file's tables as schema 1 laid them out, and marks it schema 1. */
function toSchema1(path: string): void {
  const driver = openSqlDriver(path);
  const observations = tableDefinitions.find((t) => t.name === 'observations')!;
  const columns = observations.columns.map((c) => c.name).join(', ');
  driver.exec('BEGIN');
  driver.exec(createTable(qb.schema, { ...observations, name: 'observations_v1', withoutRowid: true }, 'sqlite').compile().sql);
  driver.exec(`insert into observations_v1 (${columns}) select ${columns} from observations`);
  driver.exec('drop table observations');
  driver.exec('alter table observations_v1 rename to observations');
  // Schema 1 stored each lease's whole record as JSON.
  const leases = driver.prepare('select l.mkey, l.subject, l.record, m.id from leases l join monitors m on m.key = l.mkey').all<{ mkey: number; subject: string; record: string; id: string }>([]);
  const rewrite = driver.prepare('update leases set record = ? where mkey = ? and subject = ?');
  for (const l of leases) rewrite.run([JSON.stringify(leaseRecordOf(l.record, l.mkey, l.subject, l.id)), l.mkey, l.subject]);
  driver.exec('PRAGMA user_version = 1');
  driver.exec('COMMIT');
  driver.close();
}

function tableSql(path: string, name: string): string {
  const driver = openSqlDriver(path);
  try {
    return driver.prepare('select sql from sqlite_schema where name = ?').get<{ sql: string }>([name])!.sql;
  } finally {
    driver.close();
  }
}

/** Every observation of the monitor from seq 1, as a reader receives it. */
async function everything(owner: string): Promise<any[]> {
  const sub = await run('feeds/subscribe', { monitor: 'work', subscriber: `agent:reader-${Math.random()}` }, owner);
  const pulled = await run('feeds/pull', { subscription: sub.subscription.id, cursor: 1, limit: 1000 }, sub.token);
  return pulled.observations.filter((o: any) => o.type !== 'ai.vigil.monitor.subscribed');
}

describe('a state file of an older schema', () => {
  it('opens with its observations, leases and counters, and the server carries on from them', async () => {
    const path = join(tempDir(), 'state.db');
    open(path);
    const created = await run('monitors/create', { id: 'work', capabilities: ['observe', 'act'] });
    const owner = created.owner_token as string;
    for (let i = 0; i < 40; i++) await run('monitors/publish', { id: 'work', type: 'test.job', subject: `job-${i}`, data: { i } }, owner);
    const s = await run('feeds/subscribe', { monitor: 'work', subscriber: 'agent:worker', capabilities: ['act'] }, owner);
    const worker = { subscription: s.subscription.id };
    const claimed = await run('leases/claim', { ...worker, subject: 'job-3', lease_duration_seconds: 600 }, s.token);
    const completed = await run('leases/complete', { ...worker, subject: 'job-3', fence: claimed.fence, outcome: { done: true } }, s.token);
    const held = await run('leases/claim', { ...worker, subject: 'job-4', lease_duration_seconds: 600 }, s.token);
    const before = await everything(owner);
    const state = (await run('monitors/state', { id: 'work' }, owner));
    service!.close();
    service = undefined;
    toSchema1(path);
    expect(tableSql(path, 'observations')).toMatch(/without rowid/i);
    const whole = openSqlDriver(path);
    expect(whole.prepare("select record from leases where subject = 'job-4'").get<{ record: string }>([])!.record).toContain('"monitor":"work"');
    whole.close();

    open(path);
    expect(tableSql(path, 'observations')).not.toMatch(/without rowid/i);
    const driver = openSqlDriver(path);
    expect(driver.prepare('PRAGMA user_version').get<{ user_version: number }>([])!.user_version).toBe(schemaVersion);
    driver.close();
    const after = await everything(owner);
    // What a reader receives is the same, byte for byte.
    expect(JSON.stringify(after.slice(0, before.length))).toBe(JSON.stringify(before));
    const reopened = await run('monitors/state', { id: 'work' }, owner);
    expect(reopened.head).toBeGreaterThanOrEqual(state.head);
    // The leases stand as they were: job-3 completed, job-4 held under its fence.
    const recompleted = await run('leases/complete', { ...worker, subject: 'job-3', fence: claimed.fence, outcome: { done: true } }, s.token);
    expect(recompleted).toEqual(completed);
    const again = await run('leases/claim', { ...worker, subject: 'job-4', lease_duration_seconds: 600 }, s.token);
    expect(again).toMatchObject({ idempotent: true, fence: held.fence });
    // New observations and grants continue after the stored head.
    const published = await run('monitors/publish', { id: 'work', type: 'test.job', subject: 'job-new' }, owner);
    expect(published.seq).toBeGreaterThan(reopened.head);
    const next = await run('leases/claim', { ...worker, subject: 'job-new' }, s.token);
    expect(next.fence).toBeGreaterThan(published.seq);
  });

  it('is refused, naming both versions, when a newer Vigil wrote it', () => {
    const path = join(tempDir(), 'state.db');
    const driver = openSqlDriver(path);
    applySchema(driver);
    driver.exec(`PRAGMA user_version = ${schemaVersion + 1}`);
    driver.close();
    expect(() => Store.open({ path })).toThrow(`schema ${schemaVersion + 1}; this one knows ${schemaVersion}`);
  });
});
