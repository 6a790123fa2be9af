// The observation as served: a CloudEvents 1.0 JSON event (§4).
import type { Horizon, Origin, Tier, Verification } from './vocabulary.ts';

export interface Provenance {
  origin: Origin;
  tier: Tier;
  verification: Verification;
  actor: string;
  on_behalf_of: string | null;
  attested: boolean;
  source_ref: string | null;
  wasDerivedFrom: Array<{ source: string; id: string }>;
  wasAttributedTo: string;
  supersedes: { source: string; id: string } | null;
}

export interface ObservationDraft {
  type: string;
  subject: string | null;
  time: string;
  horizon: Horizon;
  provenance: Provenance;
  data: Record<string, unknown>;
  tags: Record<string, string>;
}

export interface Observation {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  subject: string | null;
  time: string;
  datacontenttype: 'application/json';
  sequence: string;
  tier: Tier;
  origin: Origin;
  verified: Verification;
  horizon: Horizon;
  actor: string;
  data: Record<string, unknown> & { tags: Record<string, string>; provenance: Provenance };
  redelivered?: true;
}

export function observationOf(monitorId: string, seq: number, draft: ObservationDraft): Observation {
  const p = draft.provenance;
  return {
    specversion: '1.0',
    id: String(seq),
    source: `monitor:${monitorId}`,
    type: draft.type,
    subject: draft.subject,
    time: draft.time,
    datacontenttype: 'application/json',
    sequence: String(seq).padStart(20, '0'),
    tier: p.tier,
    origin: p.origin,
    verified: p.verification,
    horizon: draft.horizon,
    actor: p.actor,
    data: { ...draft.data, tags: draft.tags, provenance: p },
  };
}

/**
 * What the producer published as `data`: the served data without the
 * `provenance` the server adds (its summary is on the observation itself)
 * and without `tags` when there are none.
 */
export function producerData(data: unknown): unknown {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return data;
  const { provenance: _provenance, tags, ...own } = data as Record<string, unknown>;
  const hasTags = typeof tags === 'object' && tags !== null && Object.keys(tags).length > 0;
  return hasTags ? { ...own, tags } : own;
}

/** Marks a stored observation (JSON text) as redelivered without parsing it. */
export function markRedelivered(body: string): string {
  return `${body.slice(0, -1)},"redelivered":true}`;
}
