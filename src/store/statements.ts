// The store's statements, compiled once by kysely and prepared on the
// connection; values are bound at run time.
import type { CompiledQuery } from 'kysely';
import { Prepared, qb } from './query-builder.ts';
import type { ObservationRow } from './records.ts';
import type { SqlDriver } from './sql-driver.ts';
import type {
  ContradictionTable,
  LeaseTable,
  MonitorTable,
  ObservationTable,
  SubjectTable,
  SubscriptionTable,
} from './tables.ts';

export const observationColumns = [
  'mkey',
  'seq',
  'type',
  'subject',
  'actor',
  'tier',
  'origin',
  'horizon',
  'time',
  'source_ref',
  'body',
] as const satisfies readonly (keyof ObservationRow)[];

/** Column orders of the row upserts; a cluster's PostgreSQL store reads captured rows in the same order, and its replica writer writes PostgreSQL's rows in it. */
export const monitorColumns = ['key', 'id', 'status', 'definition', 'owner_token_hash', 'subscribe_token_hash', 'stats'] as const satisfies readonly (keyof MonitorTable)[];
export const subscriptionColumns = ['id', 'mkey', 'subscriber', 'state', 'token_hash', 'cursor', 'mute_deadline_ms', 'record'] as const satisfies readonly (keyof SubscriptionTable)[];
export const leaseColumns = ['mkey', 'subject', 'state', 'expires_ms', 'record'] as const satisfies readonly (keyof LeaseTable)[];

/** A values object for compiling an INSERT once; the real values are bound at run time, in this order. */
function placeholders<Row>(columns: readonly (keyof Row & string)[]): Row {
  return Object.fromEntries(columns.map((c) => [c, null])) as Row;
}

export function prepareStatements(d: SqlDriver) {
  const p = (query: CompiledQuery) => new Prepared(d, query);
  return {
    monitors: p(qb.selectFrom('monitors').selectAll().orderBy('key').compile()),
    upsertMonitor: p(
      qb
        .insertInto('monitors')
        .values(placeholders<MonitorTable>(monitorColumns))
        .onConflict((oc) =>
          oc.column('key').doUpdateSet((eb) => ({
            status: eb.ref('excluded.status'),
            definition: eb.ref('excluded.definition'),
            owner_token_hash: eb.ref('excluded.owner_token_hash'),
            subscribe_token_hash: eb.ref('excluded.subscribe_token_hash'),
            stats: eb.ref('excluded.stats'),
          })),
        )
        .compile(),
    ),
    insertObservation: p(qb.insertInto('observations').values(placeholders<ObservationTable>(observationColumns)).compile()),
    addSubject: p(
      qb.insertInto('subjects').values(placeholders<SubjectTable>(['mkey', 'subject'])).onConflict((oc) => oc.doNothing()).compile(),
    ),
    subjectSeen: p(
      qb.selectFrom('subjects').select('mkey').where('mkey', '=', 0).where('subject', '=', '').compile(),
    ),
    addContradiction: p(qb.insertInto('contradictions').values(placeholders<ContradictionTable>(['mkey', 'seq', 'subject'])).compile()),
    resolveContradictionsOf: p(
      qb.deleteFrom('contradictions').where('mkey', '=', 0).where('subject', '=', '').where('seq', '<', 0).compile(),
    ),
    resolveContradiction: p(qb.deleteFrom('contradictions').where('mkey', '=', 0).where('seq', '=', 0).compile()),
    contradictions: p(qb.selectFrom('contradictions').selectAll().orderBy('mkey').orderBy('seq').compile()),
    upsertSubscription: p(
      qb
        .insertInto('subscriptions')
        .values(placeholders<SubscriptionTable>(subscriptionColumns))
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({
            state: eb.ref('excluded.state'),
            token_hash: eb.ref('excluded.token_hash'),
            cursor: eb.ref('excluded.cursor'),
            mute_deadline_ms: eb.ref('excluded.mute_deadline_ms'),
            record: eb.ref('excluded.record'),
          })),
        )
        .compile(),
    ),
    subscription: p(qb.selectFrom('subscriptions').select(['state', 'record']).where('id', '=', '').compile()),
    subscribers: p(qb.selectFrom('subscriptions').select(['id', 'mkey', 'subscriber']).compile()),
    liveCounts: p(
      qb
        .selectFrom('subscriptions')
        .select(['mkey', (eb) => eb.fn.countAll<number>().as('live')])
        .where('state', '=', 'live')
        .groupBy('mkey')
        .compile(),
    ),
    muteDeadlines: p(
      qb
        .selectFrom('subscriptions')
        .select(['id', 'mute_deadline_ms'])
        .where('state', '=', 'live')
        .where('mute_deadline_ms', 'is not', null)
        .compile(),
    ),
    upsertLease: p(
      qb
        .insertInto('leases')
        .values(placeholders<LeaseTable>(leaseColumns))
        .onConflict((oc) =>
          oc.columns(['mkey', 'subject']).doUpdateSet((eb) => ({
            state: eb.ref('excluded.state'),
            expires_ms: eb.ref('excluded.expires_ms'),
            record: eb.ref('excluded.record'),
          })),
        )
        .compile(),
    ),
    // The monitor's id with the row: the stored record leaves out what the row's key says (lease-record-text.ts).
    lease: p(
      qb
        .selectFrom('leases')
        .leftJoin('monitors', 'monitors.key', 'leases.mkey')
        .select(['leases.state', 'leases.record', 'monitors.id as monitor'])
        .where('leases.mkey', '=', 0)
        .where('leases.subject', '=', '')
        .compile(),
    ),
    leaseDeadlines: p(
      qb
        .selectFrom('leases')
        .select(['mkey', 'subject', 'expires_ms'])
        .where('state', '=', 'held')
        .compile(),
    ),
    compact: p(qb.deleteFrom('observations').where('mkey', '=', 0).where('seq', '<=', 0).compile()),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
