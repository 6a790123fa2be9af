// Every observation a monitor stores is written here: producers' items, the
// server's own bookkeeping and the record of a refused write. Each takes the
// monitor's next seq, is queued for the group commit with the monitor's row,
// and moves the counters that row shows.
import type { Clock } from '../actors/clock.ts';
import type { ProtocolError } from '../protocol/errors.ts';
import { type ObservationDraft, observationOf } from '../protocol/observation.ts';
import { isoTime } from '../protocol/wire-values.ts';
import type { Store } from '../store/store.ts';
import type { CommitNotices } from './commit-notices.ts';
import { trackContradictions } from './contradictions.ts';
import type { Feed } from './feed.ts';
import { bookkeepingDraft, rejectionDraft } from './server-drafts.ts';
import type { ObservationKind } from './service-options.ts';
import type { AppendedObservation, ServiceListeners } from './service-listener.ts';


export class ObservationWriter {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** Told of each append, so the monitor's readers wake when its batch commits. */
    private readonly notices: CommitNotices,
    private readonly listeners: ServiceListeners,
  ) {}

  /** Assigns the next seq, updates the running counters and queues the row. */
  append(feed: Feed, draft: ObservationDraft, kind: ObservationKind): AppendedObservation {
    const stats = feed.stats;
    const seq = ++stats.head;
    const observation = observationOf(feed.id, seq, draft);
    const body = JSON.stringify(observation);
    const p = draft.provenance;
    this.store.appendObservation({
      mkey: feed.key,
      seq,
      type: draft.type,
      subject: draft.subject,
      actor: p.actor,
      tier: p.tier,
      origin: p.origin,
      horizon: draft.horizon,
      time: draft.time,
      source_ref: p.source_ref,
      body,
    });
    stats.last = { seq, time: draft.time, type: draft.type };
    if (kind === 'rejected') stats.rejected++;
    if (kind === 'producer') {
      stats.observations++;
      stats.last_source_contact = isoTime(this.clock.now());
      stats.covers_until = draft.time;
      stats.last_has_event_provenance = p.source_ref !== null || p.wasDerivedFrom.length > 0;
      feed.noteType(draft.type);
      if (!p.actor.startsWith('system:')) feed.noteActor(p.actor);
      if (draft.subject !== null && feed.firstSightOf(draft.subject)) this.store.addSubject(feed.key, draft.subject);
      trackContradictions(this.store, feed, seq, draft);
    }
    this.notices.appendedTo(feed);
    this.persistMonitor(feed);
    const appended = { seq, observation, body };
    this.listeners.emit('appended', feed, appended, kind);
    return appended;
  }

  /** Records what the server itself did (configured, subscribed, lease, ...). */
  recordBookkeeping(
    feed: Feed,
    type: string,
    actor: string,
    payload: Record<string, unknown>,
    subject: string | null = null,
  ): number {
    return this.append(feed, bookkeepingDraft(feed, this.clock.now(), type, actor, payload, subject), 'bookkeeping').seq;
  }

  /** A refusal counted on the monitor without a row (an anonymous client past its recording rate). */
  countRejection(feed: Feed): void {
    feed.stats.rejected++;
    this.persistMonitor(feed);
  }

  /** Records a refused write on the monitor it targeted (§5); returns its seq. */
  recordRejection(feed: Feed, error: ProtocolError, raw: unknown, actor: string): number {
    return this.append(feed, rejectionDraft(feed, this.clock.now(), error, raw, actor), 'rejected').seq;
  }

  /** As MonitorService.persistMonitor: the row is read when the batch commits, so it holds every counter moved before then. */
  private persistMonitor(feed: Feed): void {
    this.store.putMonitor(() => feed.row());
  }
}
