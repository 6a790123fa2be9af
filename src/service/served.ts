// The shapes the protocol serves (§3, §7, §9, §12), built from what the
// server holds. Doors send these as they are.
import type { Feed } from './feed.ts';
import type { LeaseRecord, LeaseState, SubscriptionRecord, SubscriptionState } from '../store/records.ts';
import { redactDeep } from '../net/redact.ts';
import { isoTime } from '../protocol/wire-values.ts';
import { defaults } from './defaults.ts';
import { servedMonitorFields } from './monitor-fields.ts';
import type { MonitorService } from './service.ts';

export function servedLimits(service: MonitorService) {
  return {
    max_limit: defaults.maxLimit,
    default_limit: defaults.defaultLimit,
    max_wait_seconds: defaults.maxWaitSeconds,
    max_body_bytes: service.options.maxBodyBytes,
    retire_after_mute_seconds_default: service.options.retireAfterMuteSeconds,
    max_page_bytes: defaults.maxPageBytes,
    max_batch_calls: defaults.maxBatchCalls,
    max_batch_reply_bytes: defaults.maxBatchReplyBytes,
  };
}

export function servedMonitor(service: MonitorService, feed: Feed) {
  const d = feed.definition;
  const status = feed.status;
  return {
    id: d.id,
    name: d.name,
    owner: d.owner,
    // Credentials in a source's URL are write-only: whoever may read the monitor sees them as "***".
    source: redactDeep(d.source),
    filter: d.filter,
    horizon: d.horizon,
    capabilities: d.capabilities,
    visibility: d.visibility,
    attested: d.attested,
    default_grant: d.default_grant,
    version: d.version,
    created: d.created,
    updated: d.updated,
    active: status === 'active',
    head: feed.committedHead,
    description: d.description,
    types: d.types,
    ttl_seconds: d.ttl_seconds,
    retire_after_mute_seconds: d.retire_after_mute_seconds,
    ...servedMonitorFields(d),
    status,
    retention_floor: feed.stats.retention_floor,
    limits: servedLimits(service),
  };
}

export function servedSubscription(state: SubscriptionState, s: SubscriptionRecord, lag: number | null) {
  return {
    id: s.id,
    monitor: s.monitor,
    subscriber: s.subscriber,
    capabilities: s.capabilities,
    cursor: s.cursor,
    protocol: s.protocol,
    active: state === 'live',
    filter: s.filter,
    reset_policy: s.reset_policy,
    retire_after_mute_seconds: s.retire_after_mute_seconds,
    created: s.created,
    last_pull: s.last_pull,
    lag,
  };
}

export function servedLease(state: LeaseState, l: LeaseRecord) {
  const served: ServedLease = {
    subject: l.subject,
    holder: l.holder,
    lease_duration_seconds: l.lease_duration_seconds,
    acquire_time: l.acquire_time,
    renew_time: l.renew_time,
    lease_transitions: l.lease_transitions,
    attempts: l.attempts,
    delivery_count_limit: defaults.deliveryCountLimit,
    dead_letter: state === 'dead_lettered',
    monitor: l.monitor,
    state,
    // The same text as the lease's `lease` observation, made once for both (isoTime keeps the last).
    expires: l.expiresMs === null ? null : isoTime(l.expiresMs),
    fence: l.fence ?? null,
  };
  if (l.outcome !== undefined) served.outcome = l.outcome;
  if (l.evidence !== undefined) served.evidence = l.evidence;
  return served;
}

/** A lease as replies serve it (§12; `fence`, §21). */
export interface ServedLease {
  subject: string;
  holder: string | null;
  lease_duration_seconds: number;
  acquire_time: string | null;
  renew_time: string | null;
  lease_transitions: number;
  attempts: number;
  delivery_count_limit: number;
  dead_letter: boolean;
  monitor: string;
  state: LeaseState;
  expires: string | null;
  fence: number | null;
  outcome?: unknown;
  evidence?: unknown[];
}
