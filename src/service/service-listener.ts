// What the monitor service tells its listeners (`service.on(event, listener)`).
import type { Listeners } from '../events/listeners.ts';
import type { Observation } from '../protocol/observation.ts';
import type { Feed } from './feed.ts';
import type { ObservationKind } from './service-options.ts';

export interface AppendedObservation {
  seq: number;
  observation: Observation;
  /** The stored text, which is also the served one. */
  body: string;
}

export interface ServiceListener {
  /**
   * An observation was appended, in the same turn, so that rows the listener queues (a webhook
   * delivery) commit in the observation's batch.
   */
  appended: (feed: Feed, appended: AppendedObservation, kind: ObservationKind) => void;
  /** A commit stored observations on this monitor: they are readable now (a dashboard, an MCP resource subscription). */
  recorded: (feed: Feed) => void;
}

export type ServiceListeners = Listeners<ServiceListener>;
