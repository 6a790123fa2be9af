// The database's tables as kysely sees them. JSON columns hold plain objects
// serialised once; hot columns are apart so that queries can use them.

export interface MonitorTable {
  key: number;
  id: string;
  status: string;
  definition: string;
  owner_token_hash: string;
  subscribe_token_hash: string | null;
  stats: string;
}

export interface ObservationTable {
  mkey: number;
  seq: number;
  type: string;
  subject: string | null;
  actor: string;
  tier: string;
  origin: string;
  horizon: string;
  time: string;
  source_ref: string | null;
  body: string;
}

export interface SubjectTable {
  mkey: number;
  subject: string;
}

export interface ContradictionTable {
  mkey: number;
  seq: number;
  subject: string | null;
}

export interface SubscriptionTable {
  id: string;
  mkey: number;
  subscriber: string;
  state: string;
  token_hash: string;
  cursor: number;
  mute_deadline_ms: number | null;
  record: string;
}

export interface LeaseTable {
  mkey: number;
  subject: string;
  state: string;
  expires_ms: number | null;
  record: string;
}

export interface Database {
  monitors: MonitorTable;
  observations: ObservationTable;
  subjects: SubjectTable;
  contradictions: ContradictionTable;
  subscriptions: SubscriptionTable;
  leases: LeaseTable;
}
