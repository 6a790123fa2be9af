// The state document (§7), read from the running counters: it never scans
// the log.
import type { Gap } from '../protocol/vocabulary.ts';
import type { Feed } from './feed.ts';
import { defaults } from './defaults.ts';
import type { MonitorService } from './service.ts';

/** Whole seconds, rounded down (§17). */
const secondsSince = (now: number, iso: string | null) =>
  iso === null ? null : Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));

export function stateDocument(service: MonitorService, feed: Feed) {
  const now = service.now();
  const s = feed.stats;
  const d = feed.definition;
  const status = feed.status;
  const head = feed.committedHead;
  const sourceContactAge = secondsSince(now, s.last_source_contact);
  // Judged in milliseconds: the served ages are rounded down to whole seconds.
  const staleMs = now - Date.parse(s.last_source_contact ?? d.created);
  const gaps: Gap[] = ['independence_unknown'];
  if (s.last_has_event_provenance !== true) gaps.push('no_event_provenance');
  if (s.first_actor !== null && !s.several_actors) gaps.push('single_actor');
  if (d.ttl_seconds !== null && staleMs > d.ttl_seconds * 1000) gaps.push('stale_source');
  if (feed.liveSubscriptions === 0) gaps.push('no_subscribers');
  if (!d.attested) gaps.push('unattested_origin');

  const inputs: Record<string, boolean> = {
    observations: s.observations > 0,
    source_contact: s.last_source_contact !== null,
    event_provenance: s.last_has_event_provenance === true,
    subscribers: feed.liveSubscriptions > 0,
    attestation: d.attested,
    corroboration: false,
  };
  return {
    monitor: d.id,
    as_of: new Date(now).toISOString(),
    as_of_seq: head,
    head,
    retention_floor: s.retention_floor,
    covers_until: s.covers_until,
    live: { value: status === 'active', reason: status === 'active' ? null : status },
    counters: {
      observations: s.observations,
      rejected: s.rejected,
      delivered: s.delivered,
      acted: s.acted,
      subscriptions_active: feed.liveSubscriptions,
    },
    last: s.last,
    ages: {
      since_last_observation_s: secondsSince(now, s.last?.time ?? null),
      since_last_pull_s: secondsSince(now, s.last_pull),
      since_last_source_contact_s: sourceContactAge,
    },
    contradictions_open: feed.openContradictions.size,
    confidence: {
      value: null,
      computed_by: 'vigil/0.1',
      inputs: {
        present: Object.keys(inputs).filter((k) => inputs[k]),
        missing: Object.keys(inputs).filter((k) => !inputs[k]),
      },
      gaps,
    },
    computed_from: { seq_from: head === 0 ? 0 : Math.max(1, s.retention_floor), seq_to: head },
    ttl_ms: defaults.ttlMs,
    supersedes: null,
  };
}
