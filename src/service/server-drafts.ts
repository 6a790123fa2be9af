// The observations the server writes itself: bookkeeping (configured,
// subscribed, lease, ...) and the record of a refused write (§5).
import type { ProtocolError } from '../protocol/errors.ts';
import type { ObservationDraft } from '../protocol/observation.ts';
import { serverProvenance } from '../protocol/provenance.ts';
import { observationTypes } from '../protocol/vocabulary.ts';
import { isoTime, maxNesting, pathBeyondNesting } from '../protocol/wire-values.ts';
import { defaults } from './defaults.ts';
import type { Feed } from './feed.ts';

export function bookkeepingDraft(
  feed: Feed,
  nowMs: number,
  type: string,
  actor: string,
  payload: Record<string, unknown>,
  subject: string | null,
): ObservationDraft {
  return {
    type,
    subject,
    time: isoTime(nowMs),
    horizon: feed.definition.horizon,
    provenance: serverProvenance(actor, feed.definition.attested),
    data: { payload },
    tags: {},
  };
}

export function rejectionDraft(feed: Feed, nowMs: number, error: ProtocolError, raw: unknown, actor: string): ObservationDraft {
  const payload = { code: error.code, reason: error.message, raw: cutRaw(raw) };
  return bookkeepingDraft(feed, nowMs, observationTypes.rejected, actor, payload, null);
}

function cutRaw(raw: unknown): unknown {
  // A body refused for its nesting cannot be serialised whole; keep a note instead.
  if (pathBeyondNesting(raw)) return `(request body nested more than ${maxNesting} levels deep; not recorded)`;
  const text = JSON.stringify(raw) ?? 'null';
  if (Buffer.byteLength(text) <= defaults.rawCutBytes) return raw;
  return Buffer.from(text).subarray(0, defaults.rawCutBytes).toString('utf8');
}
