// What the store keeps for each entity. Actors hold these as their context;
// the store reads and writes them as rows.
import type { Filter } from '../protocol/filter.ts';
import type { ObservationTable } from './tables.ts';
import type {
  Capability,
  FeedProtocol,
  Horizon,
  ResetPolicy,
  Visibility,
} from '../protocol/vocabulary.ts';

export interface MonitorDefinition {
  id: string;
  name: string;
  description: string | null;
  owner: string;
  visibility: Visibility;
  horizon: Horizon;
  capabilities: Capability[];
  default_grant: Capability[];
  source: { kind: string } & Record<string, unknown>;
  types: string[];
  filter: Record<string, unknown>;
  ttl_seconds: number | null;
  retire_after_mute_seconds: number | null;
  /** Base-protocol fields the server stores and serves but does not act on (§3); absent from monitors made before them. */
  cadence?: MonitorCadence;
  rules?: MonitorRule[];
  budget?: MonitorBudget | null;
  attested: boolean;
  version: number;
  created: string;
  updated: string;
}

/** The rhythm a producer declares: `{heartbeat_seconds?, schedule?, event_driven?}` and any other keys it sends. */
export type MonitorCadence = Record<string, unknown>;

/** A reaction a producer declares: when an observation matches `when`, `then` (never run by Vigil). */
export interface MonitorRule {
  id: string;
  when: Record<string, unknown>;
  then: string;
  [key: string]: unknown;
}

/** What a producer may spend: `{currency?, per_day?}` and any other keys it sends; not enforced in 0.1. */
export type MonitorBudget = Record<string, unknown>;

export type MonitorStatus = 'active' | 'paused' | 'retired';

/** Running counters of a monitor's feed: the state document is read from these. */
export interface FeedStats {
  head: number;
  retention_floor: number;
  observations: number;
  rejected: number;
  delivered: number;
  acted: number;
  last: { seq: number; time: string; type: string } | null;
  /** When the server last heard from the source (a producer publish). */
  last_source_contact: string | null;
  /** The time of the last producer observation. */
  covers_until: string | null;
  last_pull: string | null;
  known_types: string[];
  first_actor: string | null;
  several_actors: boolean;
  last_has_event_provenance: boolean | null;
  /** Where a live source left off (file position, feed ids, last HTTP status), stored with its observations. */
  source_cursor?: unknown;
}

export interface MonitorRow {
  key: number;
  status: MonitorStatus;
  definition: MonitorDefinition;
  ownerTokenHash: string;
  subscribeTokenHash: string | null;
  stats: FeedStats;
}

export type SubscriptionState = 'live' | 'retired';

export interface SubscriptionRecord {
  id: string;
  monitor: string;
  mkey: number;
  subscriber: string;
  capabilities: Capability[];
  protocol: FeedProtocol;
  filter: Filter;
  reset_policy: ResetPolicy;
  retire_after_mute_seconds: number | null;
  created: string;
  last_pull: string | null;
  tokenHash: string;
  cursor: number;
  /** Highest seq already shown; later pulls mark repeats as redelivered. */
  maxShown: number;
  /** Effective mute period in ms (subscription, else monitor, else server). */
  muteMs: number;
  lastActivityMs: number;
}

export interface SubscriptionRow {
  state: SubscriptionState;
  record: SubscriptionRecord;
}

export type LeaseState = 'held' | 'free' | 'completed' | 'dead_lettered';

export interface LeaseRecord {
  monitor: string;
  mkey: number;
  subject: string;
  holder: string | null;
  lease_duration_seconds: number;
  acquire_time: string | null;
  renew_time: string | null;
  lease_transitions: number;
  attempts: number;
  rejects: number;
  expiresMs: number | null;
  /**
   * The fencing token of the latest grant: the seq of its claim's `lease` observation (protocol.md §21).
   * Absent on a lease never claimed since tokens were introduced.
   */
  fence?: number;
  /**
   * The seq of the observation through which take-next found this subject (protocol.md §21), kept
   * across later grants: where the subject stands in its queue when it is freed again.
   */
  queued?: number;
  outcome?: unknown;
  evidence?: unknown[];
  completedBy: string | null;
  /** The seq of the `lease` observation that recorded the completion. */
  completedSeq?: number;
}

export interface LeaseRow {
  state: LeaseState;
  record: LeaseRecord;
}

/** One stored observation: the served JSON as text, with the columns filters use. */
export type ObservationRow = ObservationTable;
