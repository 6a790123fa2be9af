// What a MonitorService is built with, and the hooks the live sources give it.
import type { InspectionEvent } from 'xstate';
import type { Clock } from '../actors/clock.ts';
import type { MonitorDefinition } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { ClientLimitSettings } from './client-limits.ts';
import type { Feed } from './feed.ts';

export interface ServiceOptions {
  readonly store: Store;
  readonly clock?: Clock;
  /** When set, creating a monitor needs it; such monitors are attested. */
  readonly registrationToken?: string;
  /** When set, the admin operations are enabled and need it. */
  readonly adminToken?: string;
  readonly retireAfterMuteSeconds?: number;
  readonly maxBodyBytes?: number;
  /** Idle time before an event stream sends a heartbeat. */
  readonly heartbeatMs?: number;
  /** Subscription and lease actors kept in memory (the rest wait as rows). */
  readonly residentActors?: number;
  /** Receives the actors' inspection events (vigil serve --inspect). */
  readonly inspect?: (event: InspectionEvent) => void;
  readonly log?: (line: string) => void;
  /** Per-client-address limits for anonymous use. */
  readonly clientLimits?: Partial<ClientLimitSettings>;
  /** A cluster node runs only the timers of the monitors it owns (src/cluster/ownership.ts). */
  readonly timersRunHere?: (mkey: number) => boolean;
}

/** What the live sources (src/sources) need from monitor operations. */
export interface SourceHooks {
  /** Checks a monitor's source for this caller; returns it with defaults filled in. */
  check(source: MonitorDefinition['source'], caller: { bearer?: string }): MonitorDefinition['source'];
  /** A live source of this monitor (by id) runs here now. */
  runsSource(id: string): boolean;
  /** A monitor was created or configured: start, restart or stop its source. */
  changed(feed: Feed): void;
  /** A cluster node hands the monitor back: its source stops once the poll in flight (if any) is done, within `pollWithinMs`. */
  handBack(feed: Feed, pollWithinMs: number): void;
  /** Resolves once a stopped source's poll in flight is done and the writes it queued on a cluster node are stored or given up (a handover waits for them). */
  drained(mkey: number): Promise<void>;
}

export type ObservationKind = 'producer' | 'bookkeeping' | 'rejected';
