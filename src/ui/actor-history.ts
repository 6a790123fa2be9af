// An actor's last transitions from when it started, not only from when its
// chart opened: read back from what its monitor recorded of them — a lease's
// `lease` observations (claim, renew, complete, release, reject, expired), a
// subscription's `subscribed` and `subscription_retired`, a monitor's
// `configured`. Every transition of these machines writes one, so the list is
// whole; the read is bounded (the last 2,000 observations of the monitor) and
// nothing is kept. A source's transitions are not recorded: its chart lists
// those it saw while open (transition-log.ts).
import { observationTypes } from '../protocol/vocabulary.ts';
import type { Feed } from '../service/feed.ts';
import type { MonitorService } from '../service/service.ts';
import { latestMatching } from './observation-filter.ts';
import type { TransitionEntry } from './transition-log.ts';

const kept = 8;
const window = 2000;

type Row = { body: string };
type Recorded = { time: string; data?: { payload?: Record<string, unknown> } };
const parse = (row: Row): Recorded => JSON.parse(row.body) as Recorded;

/** Lease actions as the lease machine's events and the state each leads to. */
const leaseSteps: Record<string, [event: string, to: string]> = {
  claim: ['CLAIM', 'held'],
  renew: ['RENEW', 'held'],
  complete: ['COMPLETE', 'completed'],
  release: ['RELEASE', 'free'],
  reject: ['REJECT', 'free'],
  expired: ['xstate.after.untilExpiry.lease.held', 'free'],
};

function chain(steps: Array<{ at: string; event: string; to: string }>, first: (to: string) => string | null): TransitionEntry[] {
  const out: TransitionEntry[] = [];
  for (const s of steps) out.push({ at: s.at, event: s.event, from: out.at(-1)?.to ?? first(s.to), to: s.to });
  return out.slice(-kept);
}

function leaseHistory(service: MonitorService, feed: Feed, subject: string): TransitionEntry[] {
  const rows = latestMatching(service, feed, { type: observationTypes.lease, subject, bookkeeping: true }, kept + 1).map(parse);
  const steps = rows.flatMap((o) => {
    const p = o.data?.payload ?? {};
    const step = leaseSteps[String(p.action)];
    if (!step) return [];
    const to = p.action === 'reject' && p.dead_lettered === true ? 'dead_lettered' : step[1];
    return [{ at: o.time, event: step[0], to }];
  });
  return chain(steps, (to) => (to === 'held' ? 'free' : 'held'));
}

function subscriptionHistory(service: MonitorService, feed: Feed, id: string): TransitionEntry[] {
  const head = feed.committedHead;
  const types = [observationTypes.subscribed, observationTypes.subscriptionRetired];
  const rows = service.store.readFeed(feed.key, Math.max(1, head - window + 1), window, [{ types }], head).map(parse);
  const steps = rows.flatMap((o) => {
    const p = o.data?.payload ?? {};
    if (p.subscription !== id) return [];
    if (p.action === undefined) return [{ at: o.time, event: p.reason === 'mute' ? 'xstate.after.untilMute.subscription.live' : 'RETIRE', to: 'retired' }];
    if (p.action === 'subscribe') return [{ at: o.time, event: 'subscribe', to: 'live' }];
    return [{ at: o.time, event: p.action === 'resubscribe' ? 'REKEY' : String(p.action).toUpperCase(), to: 'live' }];
  });
  return chain(steps, (to) => (to === 'live' ? null : 'live'));
}

const monitorSteps: Record<string, [event: string, to: string]> = {
  create: ['create', 'active'],
  pause: ['PAUSE', 'paused'],
  resume: ['RESUME', 'active'],
  retire: ['RETIRE', 'retired'],
};

function monitorHistory(service: MonitorService, feed: Feed): TransitionEntry[] {
  const rows = latestMatching(service, feed, { type: observationTypes.configured, bookkeeping: true }, 50).map(parse);
  const steps = rows.flatMap((o) => {
    const step = monitorSteps[String(o.data?.payload?.action)];
    return step ? [{ at: o.time, event: step[0], to: step[1] }] : [];
  });
  return chain(steps, (to) => (to === 'active' ? null : 'active'));
}

/** The actor's recorded transitions, oldest first, or null when its kind records none (a source). */
export function recordedTransitions(service: MonitorService, kind: string, key: string, context: Record<string, unknown>): TransitionEntry[] | null {
  if (kind === 'lease') {
    const lease = context.lease as { mkey: number; subject: string };
    const feed = service.feedByKey(lease.mkey);
    return feed ? leaseHistory(service, feed, lease.subject) : [];
  }
  if (kind === 'subscription') {
    const record = context.subscription as { mkey: number };
    const feed = service.feedByKey(record.mkey);
    return feed ? subscriptionHistory(service, feed, key) : [];
  }
  if (kind === 'monitor') {
    const feed = service.feed(key);
    return feed ? monitorHistory(service, feed) : [];
  }
  return null;
}
