// The PostgreSQL tables as kysely sees them: the SQLite layout (src/store/tables.ts)
// plus the per-monitor change counter `rev` that every write transaction moves.
import type { ContradictionTable, LeaseTable, MonitorTable, ObservationTable, SubjectTable, SubscriptionTable } from '../tables.ts';

export interface PgDatabase {
  monitors: MonitorTable & { head: number; rev: number };
  observations: ObservationTable;
  subjects: SubjectTable & { rev: number };
  contradictions: ContradictionTable;
  subscriptions: SubscriptionTable & { rev: number };
  leases: LeaseTable & { rev: number };
}

export type PgMonitorRow = PgDatabase['monitors'];
export type PgSubscriptionRow = PgDatabase['subscriptions'];
export type PgLeaseRow = PgDatabase['leases'];
