// The seed's webhook shapes as they travel on the wire: the server renders
// them and the SDK client returns them, so both import them from here.

import { eventTypes } from '../events/channel.ts';

/** What the server itself emits: each observation a followed monitor stores. */
export const monitorObservationEvent = 'monitor.observation';

/** Every event a webhook may be registered for: the product events and the server's own. */
export const webhookEvents: readonly string[] = [...eventTypes, monitorObservationEvent];

export interface WebhookRegistration {
  id: string;
  event: string;
  url: string;
  active: 'true' | 'false';
  created_at: string;
  /** monitor.observation only: the monitor followed. */
  monitor?: string;
  /** monitor.observation only: the observation types delivered (a trailing * matches a prefix); all when absent. */
  types?: string[];
}

export interface WebhookTestResult {
  delivered: boolean;
  response_code?: number;
  error?: string;
}

export interface DeliveryView {
  id: string;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  response_code: number | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}
