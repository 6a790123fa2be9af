// The Observations tab's filter (`/ui/events?obs_type=&obs_subject=&obs_actor=&obs_bookkeeping=1`):
// the latest observations of each visible monitor that match it. The
// protocol's bookkeeping (configured, subscribed, lease, rejected, state, …)
// is folded away unless asked for, so a client refused every second no
// longer fills the table; contradictions are not bookkeeping and stay.
import type { Filter } from '../protocol/filter.ts';
import { observationTypes } from '../protocol/vocabulary.ts';
import type { Feed } from '../service/feed.ts';
import type { MonitorService } from '../service/service.ts';

export interface ObservationFilter {
  type?: string;
  subject?: string;
  actor?: string;
  bookkeeping: boolean;
}

export const bookkeepingTypes: readonly string[] = Object.values(observationTypes).filter(
  (t) => t !== observationTypes.contradiction && t !== observationTypes.contradictionResolved,
);
const maxLength = 200;
/** Rows looked at, newest last, before giving up on finding `limit` matches. */
const windows = [200, 2000];

/** The filter from the query, or the reason it is refused. */
export function observationFilter(query: string): ObservationFilter | string {
  const params = new URLSearchParams(query);
  const filter: ObservationFilter = { bookkeeping: params.get('obs_bookkeeping') === '1' };
  for (const key of ['type', 'subject', 'actor'] as const) {
    const value = params.get(`obs_${key}`)?.trim();
    if (!value) continue;
    if (value.length > maxLength) return `obs_${key} must be at most ${maxLength} characters; got ${value.length}`;
    filter[key] = value;
  }
  return filter;
}

/** The latest `limit` observations of the feed that pass the filter, oldest first. */
export function latestMatching(service: MonitorService, feed: Feed, filter: ObservationFilter, limit: number): Array<{ seq: number; body: string }> {
  const head = feed.committedHead;
  if (head === 0) return [];
  let types: string[] | undefined = filter.type ? [filter.type] : undefined;
  if (!filter.bookkeeping) types = (types ?? feed.knownTypes()).filter((t) => !bookkeepingTypes.includes(t));
  if (types && types.length === 0) return [];
  const where: Filter = { ...(types ? { types } : {}), ...(filter.subject ? { subjects: [filter.subject] } : {}), ...(filter.actor ? { actors: [filter.actor] } : {}) };
  let rows: Array<{ seq: number; body: string }> = [];
  for (const window of windows) {
    rows = service.store.readFeed(feed.key, Math.max(1, head - window + 1), window, [where], head);
    if (rows.length >= limit || head <= window) break;
  }
  return rows.slice(-limit);
}
