// A batch's write transaction as statements sent together (pg-pipeline.ts):
// each statement's text is fixed (rows go in as one JSON parameter, taken
// apart by json_array_elements), so it is parsed once per session, and
// nothing is built or compiled per batch. Every answer is checked before
// COMMIT: a monitor whose rev or head moved, a confirmation that no longer
// holds, or a fence that lapsed rolls the whole batch back.
import { leaseColumns, monitorColumns, observationColumns, subscriptionColumns } from '../statements.ts';
import { tableDefinitions } from '../table-definitions.ts';
import type { CapturedBatch } from './captured-batch.ts';
import type { Statement } from './pg-pipeline.ts';

const typeOf = new Map(tableDefinitions.map((t) => [t.name, new Map(t.columns.map((c) => [c.name, c.type === 'integer' ? 'bigint' : 'text']))]));
const monitorFieldColumns = monitorColumns.filter((c) => c !== 'key');

/**
 * `insert into <table> (<columns>) select … from json_array_elements($1::json)`: one text whatever
 * the row count, and the rows go in as one JSON parameter (an array per row). JSON.stringify encodes
 * a batch in a fifth of the CPU that pg's array parameters take (one escaped literal per column).
 */
function jsonRowsInsert(table: string, columns: readonly string[], tail = '', param = 1): string {
  const types = typeOf.get(table)!;
  const fields = columns.map((c, i) => `(r->>${i})::${types.get(c)}`).join(', ');
  return `insert into ${table} (${columns.join(', ')}) select ${fields} from json_array_elements($${param}::json) as r ${tail}`.trim();
}

/** The rows as the one parameter of a jsonRowsInsert (a missing value is null). */
const jsonRows = (rows: ReadonlyArray<readonly unknown[]>): [string] => [JSON.stringify(rows)];

const begin: Statement = { name: 'vigil_begin', text: 'begin' };
export const commitStatement: Statement = { name: 'vigil_commit', text: 'commit' };
export const rollbackStatement: Statement = { name: 'vigil_rollback', text: 'rollback' };

const setFields = monitorFieldColumns.map((c, i) => `${c} = $${i + 2}`).join(', ');
const n = monitorFieldColumns.length + 2;
// The monitor's claim: its rev moves under its row lock, only from the rev this node read; appends
// continue exactly at the stored head, so no seq is skipped or taken twice. A claim that matched no row
// fails the statement (division by zero, 22012), so the transaction aborts even when COMMIT was sent
// with it, before its answers were read.
const strict = (write: string) => `with c as (${write}) select (select rev from c) as rev, 1 / (select count(*)::int from c) as claimed`;
export const claimFailed = '22012';
const claims = {
  fieldsAndHead: strict(`update monitors set ${setFields}, rev = rev + 1, head = $${n + 1} where key = $1 and rev = $${n} and head = $${n + 2} returning rev`),
  fields: strict(`update monitors set ${setFields}, rev = rev + 1 where key = $1 and rev = $${n} returning rev`),
  head: strict('update monitors set rev = rev + 1, head = $3 where key = $1 and rev = $2 and head = $4 returning rev'),
  rev: strict('update monitors set rev = rev + 1 where key = $1 and rev = $2 returning rev'),
  create: strict(
    `insert into monitors (key, ${monitorFieldColumns.join(', ')}, head, rev) values (${monitorColumns.map((_, i) => `$${i + 1}`).join(', ')}, $${monitorColumns.length + 1}, 1) on conflict do nothing returning rev`,
  ),
};

const subscriptionUpsert =
  'on conflict (id) do update set state = excluded.state, token_hash = excluded.token_hash, cursor = excluded.cursor, mute_deadline_ms = excluded.mute_deadline_ms, record = excluded.record, rev = excluded.rev';
const leaseUpsert = 'on conflict (mkey, subject) do update set state = excluded.state, expires_ms = excluded.expires_ms, record = excluded.record, rev = excluded.rev';

const texts = {
  confirm: 'select key, rev from monitors where key = any($1::bigint[])',
  observations: jsonRowsInsert('observations', observationColumns),
  subjects: jsonRowsInsert('subjects', ['mkey', 'subject', 'rev'], 'on conflict do nothing'),
  dropContradictions: 'delete from contradictions where mkey = $1',
  contradictions: jsonRowsInsert('contradictions', ['mkey', 'seq', 'subject']),
  subscriptions: jsonRowsInsert('subscriptions', [...subscriptionColumns, 'rev'], subscriptionUpsert),
  leases: jsonRowsInsert('leases', [...leaseColumns, 'rev'], leaseUpsert),
  compact: 'delete from observations where mkey = $1 and seq <= $2',
  // The batch's timer and source writes stand only while the token they were made under is the monitor's
  // current, unexpired ownership; the rows stay share-locked until the batch commits, so a takeover waits
  // for it and never reads past a write made under the old token. Last, so that they are locked only for
  // the batch's final moments.
  fences: `select o.mkey from monitor_owners o
        join unnest($1::bigint[], $2::bigint[]) as f(mkey, token) on o.mkey = f.mkey and o.token = f.token
       where o.expires_ms > (extract(epoch from clock_timestamp()) * 1000)::bigint
       order by o.mkey for share of o`,
  notify: 'select pg_notify($1, $2)',
};

export interface PlannedCommit {
  readonly statements: Statement[];
  /** The rev each written monitor moves to when the batch commits. */
  readonly revs: Map<number, number>;
  /** Index of each monitor's claim in the statements' answers (a claim that failed answers claimFailed). */
  readonly claims: Array<{ mkey: number; at: number }>;
  /** Index of the confirmations' read, if any. */
  readonly confirm?: { at: number; mkeys: number[] };
  /** Index of the fence check, if any. */
  readonly fences?: { at: number; mkeys: number[] };
}

/**
 * The batch's statements from BEGIN on, without COMMIT. Undefined when the batch cannot stand
 * whatever the database holds (a monitor created here whose appends do not start at seq 1).
 */
export function planCommit(
  batch: CapturedBatch,
  known: ReadonlyMap<number, number>,
  contradictionsOf: (mkey: number) => Array<{ seq: number; subject: string | null }>,
  channel: string,
): PlannedCommit | undefined {
  const statements: Statement[] = [begin];
  const revs = new Map<number, number>();
  const claimAt: PlannedCommit['claims'] = [];
  // Monitors in key order: two batches never wait on each other's rows in a cycle.
  for (const mkey of [...batch.written].sort((a, b) => a - b)) {
    const params = batch.monitors.get(mkey);
    const seqs = batch.seqs.get(mkey);
    const knownRev = known.get(mkey);
    const fields = params ? monitorFieldColumns.map((c) => params[monitorColumns.indexOf(c)] ?? null) : undefined;
    claimAt.push({ mkey, at: statements.length });
    if (knownRev === undefined) {
      if (!fields || (seqs && seqs.first !== 1)) return undefined;
      statements.push({ name: 'vigil_create', text: claims.create, values: [mkey, ...fields, seqs?.last ?? 0] });
      revs.set(mkey, 1);
      continue;
    }
    revs.set(mkey, knownRev + 1);
    if (fields && seqs) statements.push({ name: 'vigil_claim_fh', text: claims.fieldsAndHead, values: [mkey, ...fields, knownRev, seqs.last, seqs.first - 1] });
    else if (fields) statements.push({ name: 'vigil_claim_f', text: claims.fields, values: [mkey, ...fields, knownRev] });
    else if (seqs) statements.push({ name: 'vigil_claim_h', text: claims.head, values: [mkey, knownRev, seqs.last, seqs.first - 1] });
    else statements.push({ name: 'vigil_claim', text: claims.rev, values: [mkey, knownRev] });
  }
  // A decision that wrote nothing stands only if the monitor is still at the rev memory read.
  const confirmed = [...batch.touched].filter((mkey) => !batch.written.has(mkey));
  let confirm: PlannedCommit['confirm'];
  if (confirmed.length > 0) {
    confirm = { at: statements.length, mkeys: confirmed };
    statements.push({ name: 'vigil_confirm', text: texts.confirm, values: [confirmed] });
  }
  if (batch.observations.length > 0) {
    statements.push({ name: 'vigil_observations', text: texts.observations, values: jsonRows(batch.observations) });
  }
  if (batch.subjects.length > 0) {
    const rows = batch.subjects.map(([mkey, subject]) => [mkey, subject, revs.get(mkey as number)]);
    statements.push({ name: 'vigil_subjects', text: texts.subjects, values: jsonRows(rows) });
  }
  for (const mkey of batch.contradictions) {
    statements.push({ name: 'vigil_drop_contradictions', text: texts.dropContradictions, values: [mkey] });
    const rows = contradictionsOf(mkey).map((c) => [mkey, c.seq, c.subject]);
    if (rows.length > 0) statements.push({ name: 'vigil_contradictions', text: texts.contradictions, values: jsonRows(rows) });
  }
  // (The batch holds each subscription and lease once, as one upsert requires.)
  if (batch.subscriptions.size > 0) {
    const rows = [...batch.subscriptions.values()].map((p) => [...subscriptionColumns.map((_, i) => p[i]), revs.get(p[1] as number)]);
    statements.push({ name: 'vigil_subscriptions', text: texts.subscriptions, values: jsonRows(rows) });
  }
  if (batch.leases.size > 0) {
    const rows = [...batch.leases.values()].map((p) => [...leaseColumns.map((_, i) => p[i]), revs.get(p[0] as number)]);
    statements.push({ name: 'vigil_leases', text: texts.leases, values: jsonRows(rows) });
  }
  for (const [mkey, upto] of batch.compactions) statements.push({ name: 'vigil_compact', text: texts.compact, values: [mkey, upto] });
  const fenced = [...batch.fences].filter(([mkey]) => batch.written.has(mkey)).sort(([a], [b]) => a - b);
  let fences: PlannedCommit['fences'];
  if (fenced.length > 0) {
    fences = { at: statements.length, mkeys: fenced.map(([mkey]) => mkey) };
    statements.push({ name: 'vigil_fences', text: texts.fences, values: [fences.mkeys, fenced.map(([, token]) => token)] });
  }
  // Delivered on commit only: a rolled-back batch wakes nobody.
  // mkey:rev:1 when the batch moved a lease or a subscription (a timer owner must catch up).
  if (revs.size > 0) {
    const timers = new Set([...batch.leases.values()].map((p) => p[0] as number));
    for (const p of batch.subscriptions.values()) timers.add(p[1] as number);
    const payload = [...revs].map(([mkey, rev]) => `${mkey}:${rev}:${timers.has(mkey) ? 1 : 0}`).join(',');
    statements.push({ name: 'vigil_notify', text: texts.notify, values: [channel, payload] });
  }
  return { statements, revs, claims: claimAt, confirm, fences };
}

/**
 * The common batch (one monitor, no confirmation, fence, contradiction or compaction) as one
 * statement: the claim and the writes as data-modifying CTEs, the notification in the result. A
 * statement is atomic on its own, so it needs no BEGIN or COMMIT; a claim that matched no row fails
 * it (claimFailed) and nothing of it stays. Undefined when the batch is not of that kind.
 */
export function planSingle(batch: CapturedBatch, known: ReadonlyMap<number, number>, channel: string): { statement: Statement; revs: Map<number, number> } | undefined {
  if (batch.written.size !== 1 || batch.touched.size !== 1 || batch.contradictions.size > 0 || batch.compactions.length > 0) return undefined;
  if ([...batch.fences.keys()].some((mkey) => batch.written.has(mkey))) return undefined;
  const [mkey] = batch.written as Set<number>;
  const params = batch.monitors.get(mkey!);
  const seqs = batch.seqs.get(mkey!);
  const knownRev = known.get(mkey!);
  const fields = params ? monitorFieldColumns.map((c) => params[monitorColumns.indexOf(c)] ?? null) : undefined;
  const values: unknown[] = [];
  const $ = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const shape: string[] = [];
  let claim: string;
  if (knownRev === undefined) {
    if (!fields || (seqs && seqs.first !== 1)) return undefined;
    shape.push('c');
    claim = `insert into monitors (key, ${monitorFieldColumns.join(', ')}, head, rev) values (${$(mkey)}, ${fields.map($).join(', ')}, ${$(seqs?.last ?? 0)}, 1) on conflict do nothing returning rev`;
  } else {
    const set = [`rev = rev + 1`];
    const where = [`key = ${$(mkey)}`, `rev = ${$(knownRev)}`];
    if (fields) {
      shape.push('f');
      set.push(...monitorFieldColumns.map((c, i) => `${c} = ${$(fields[i])}`));
    }
    if (seqs) {
      shape.push('h');
      set.push(`head = ${$(seqs.last)}`);
      where.push(`head = ${$(seqs.first - 1)}`);
    }
    claim = `update monitors set ${set.join(', ')} where ${where.join(' and ')} returning rev`;
  }
  const rev = knownRev === undefined ? 1 : knownRev + 1;
  const ctes = [`c as (${claim})`];
  // A CTE inserting the rows, their parameter numbered after the parameters so far.
  const insert = (name: string, table: string, columns: readonly string[], rows: ReadonlyArray<readonly unknown[]>, tail = '') => {
    shape.push(name);
    values.push(...jsonRows(rows));
    ctes.push(`${name} as (${jsonRowsInsert(table, columns, tail, values.length)})`);
  };
  if (batch.observations.length > 0) insert('o', 'observations', observationColumns, batch.observations);
  if (batch.subjects.length > 0) {
    insert('s', 'subjects', ['mkey', 'subject', 'rev'], batch.subjects.map(([m, subject]) => [m, subject, rev]), 'on conflict do nothing');
  }
  if (batch.subscriptions.size > 0) {
    const rows = [...batch.subscriptions.values()].map((p) => [...subscriptionColumns.map((_, i) => p[i]), rev]);
    insert('u', 'subscriptions', [...subscriptionColumns, 'rev'], rows, subscriptionUpsert);
  }
  if (batch.leases.size > 0) {
    const rows = [...batch.leases.values()].map((p) => [...leaseColumns.map((_, i) => p[i]), rev]);
    insert('l', 'leases', [...leaseColumns, 'rev'], rows, leaseUpsert);
  }
  // Delivered on commit only: a failed statement wakes nobody. (mkey:rev:1 when a lease or a subscription moved.)
  const payload = `${mkey}:${rev}:${batch.leases.size > 0 || batch.subscriptions.size > 0 ? 1 : 0}`;
  const text = `with ${ctes.join(', ')} select (select rev from c) as rev, 1 / (select count(*)::int from c) as claimed, pg_notify(${$(channel)}, ${$(payload)})`;
  return { statement: { name: `vigil_one_${shape.join('')}`, text, values }, revs: new Map([[mkey!, rev]]) };
}
