// What the dashboard shows (§19), for one caller: the monitors its token may
// see (all of them with the admin token), their subscriptions with lag,
// leases and expiry, recent observations, recipe runs, and every resident
// actor of those monitors with its machine and current state (and the leases
// kept as rows without an actor, as `stored`). Built from
// what the server holds in memory plus a few bounded reads.
import { sourceStateOf } from '../machines/source-machine.ts';
import { isLive } from '../sources/config.ts';
import { type Caller, canSee, isOwner } from '../service/access.ts';
import type { Feed } from '../service/feed.ts';
import type { MonitorService } from '../service/service.ts';
import { stateDocument } from '../service/state-document.ts';
import { lagOf } from '../service/subscription-handle.ts';
import { secretMatches } from '../service/tokens.ts';
import { redactCredentials } from '../net/redact.ts';
import type { LeaseHistory } from './lease-history.ts';
import type { ObservationRates } from './rates.ts';
import type { ObservationFilter } from './observation-filter.ts';
import type { RecentRows, ServedRow } from './recent-rows.ts';
import type { RunBook } from './run-book.ts';

/** What the dashboard keeps beyond the service: rates for the sparklines, lease history for the timelines. */
export interface ViewBooks {
  rates?: ObservationRates;
  leases?: LeaseHistory;
  runs?: RunBook;
}
const timelinesShown = 20;

const maxRows = 200;
const recentPerMonitor = 20;
const recentShown = 60;
const runType = 'ai.vigil.recipe.run';
const stepType = 'ai.vigil.recipe.step';

const newestFirst = (a: ServedRow, b: ServedRow) => (a.time < b.time ? 1 : a.time > b.time ? -1 : b.seq - a.seq);

const stateName = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * The dashboard for one caller, but for its Observations tab, and the function
 * that fills the tab for a filter: the view is built once per class of viewers,
 * the tab once per filter, from the shared recent rows (recent-rows.ts).
 */
export function dashboardView(service: MonitorService, caller: Caller, cache: RecentRows, books: ViewBooks = {}) {
  const admin = service.options.adminToken !== undefined && secretMatches(caller.bearer, service.options.adminToken);
  const feeds: Feed[] = [];
  for (const feed of service.allFeeds()) if (admin || canSee(feed, caller)) feeds.push(feed);
  const byKey = new Map(feeds.map((f) => [f.key, f]));
  // Subscriptions and leases are shown to the owner (or the admin) of their monitor only.
  const insider = new Set(feeds.filter((f) => admin || isOwner(f, caller)).map((f) => f.key));

  const monitors = feeds.slice(0, maxRows).map((feed) => {
    const state = stateDocument(service, feed);
    const source = service.system.sources.isResident(feed.id) ? service.system.sources.get(feed.id) : undefined;
    const snapshot = source?.getSnapshot();
    return {
      id: feed.id,
      name: feed.definition.name,
      status: feed.status,
      source: feed.definition.source.kind,
      source_ref: typeof feed.definition.source.ref === 'string' ? feed.definition.source.ref : null,
      /** Run by the server itself; otherwise the source is a label (§18). */
      source_live: isLive(feed.definition.source),
      source_state: snapshot ? sourceStateOf(snapshot.value) : null,
      source_error: snapshot?.context.lastError ? redactCredentials(snapshot.context.lastError) : null,
      head: state.head,
      observations: state.counters.observations,
      subscriptions: state.counters.subscriptions_active,
      since_last_source_contact_s: state.ages.since_last_source_contact_s,
      gaps: state.confidence.gaps,
      ttl_seconds: feed.definition.ttl_seconds,
      contradictions_open: state.contradictions_open,
      per_minute: books.rates?.perMinute(feed) ?? [],
    };
  });

  const subscriptions = [];
  for (const [id, actor] of service.system.subscriptions.entries()) {
    if (subscriptions.length >= maxRows) break;
    const snapshot = actor.getSnapshot();
    const record = snapshot.context.subscription;
    const feed = byKey.get(record.mkey);
    if (!feed || !insider.has(record.mkey)) continue;
    subscriptions.push({
      id,
      monitor: feed.id,
      subscriber: record.subscriber,
      state: stateName(snapshot.value),
      cursor: record.cursor,
      lag: lagOf(service, feed, record),
      last_pull: record.last_pull,
    });
  }

  const leases = [];
  // Resident actors' leases, then the leases changed on their rows that no actor holds (service/lease-cold.ts).
  const leaseStates = function* () {
    for (const [, actor] of service.system.leases.entries()) {
      const snapshot = actor.getSnapshot();
      yield { state: stateName(snapshot.value), lease: snapshot.context.lease };
    }
    for (const [, row] of service.leaseRows.withoutActor()) yield { state: row.state, lease: row.record };
  };
  for (const { state, lease } of leaseStates()) {
    if (leases.length >= maxRows) break;
    const feed = byKey.get(lease.mkey);
    if (!feed || !insider.has(lease.mkey)) continue;
    leases.push({
      monitor: feed.id,
      subject: lease.subject,
      state,
      holder: lease.holder,
      expires: lease.expiresMs === null ? null : new Date(lease.expiresMs).toISOString(),
      attempts: lease.attempts,
    });
  }

  const shownFeeds = feeds.slice(0, maxRows);
  const recent: ServedRow[] = [];
  for (const feed of shownFeeds) recent.push(...cache.all(feed).slice(-recentPerMonitor));
  cache.prune(new Set(shownFeeds.map((f) => f.key)));
  recent.sort(newestFirst);
  const observationTypes = new Set<string>();
  for (const feed of shownFeeds) for (const t of feed.knownTypes()) if (observationTypes.size < 200) observationTypes.add(t);
  /** The Observations tab for a filter: the latest matching observations of each shown monitor (bookkeeping folded unless asked for). */
  const observationsFor = (filter: ObservationFilter): ServedRow[] => {
    const shown: ServedRow[] = [];
    for (const feed of shownFeeds) shown.push(...cache.matching(feed, filter, recentPerMonitor));
    return shown.sort(newestFirst).slice(0, recentShown);
  };

  const visibleIds = new Set(feeds.map((f) => f.id));
  const actors = [];
  for (const [kind, key, actor] of service.system.residents()) {
    if (actors.length >= maxRows * 2) break;
    const snapshot = actor.getSnapshot() as { value: unknown; status: string; context: Record<string, unknown> };
    const monitor = monitorOfActor(kind, key, snapshot.context, byKey);
    if (!admin && (monitor === undefined || !visibleIds.has(monitor))) continue;
    if (!admin && kind !== 'monitor' && kind !== 'source' && !feeds.some((f) => f.id === monitor && insider.has(f.key))) continue;
    actors.push({
      kind,
      key,
      monitor: monitor ?? null,
      machine: (actor as { logic?: { config?: { id?: string } } }).logic?.config?.id ?? kind,
      state: kind === 'source' ? sourceStateOf(snapshot.value) : stateName(snapshot.value),
      status: snapshot.status,
    });
  }
  // A lease changed on its row has no actor until something needs one (charting it makes one): `stored`.
  for (const [key, row] of service.leaseRows.withoutActor()) {
    if (actors.length >= maxRows * 2) break;
    const monitor = byKey.get(row.record.mkey)?.id;
    if (monitor === undefined || (!admin && (!visibleIds.has(monitor) || !insider.has(row.record.mkey)))) continue;
    actors.push({ kind: 'lease', key, monitor, machine: 'lease', state: row.state, status: 'stored' });
  }

  const leaseTimelines = [];
  if (books.leases) {
    for (const feed of feeds) {
      if (leaseTimelines.length >= timelinesShown) break;
      if (!insider.has(feed.key)) continue;
      const subjects = books.leases.of(feed);
      if (subjects.length > 0) leaseTimelines.push({ monitor: feed.id, subjects });
    }
  }

  // Runs are shown from the monitors that received any (a recipes monitor: see src/recipes/publish).
  const runWaterfalls = [];
  if (books.runs) {
    for (const feed of feeds) {
      if (runWaterfalls.length >= timelinesShown) break;
      const known = [...feed.definition.types, ...feed.stats.known_types];
      if (!known.includes(runType) && !known.includes(stepType)) continue;
      const runs = books.runs.of(feed).slice(0, 10);
      if (runs.length > 0) runWaterfalls.push({ monitor: feed.id, name: feed.definition.name, runs });
    }
  }

  return {
    view: {
      as_of: new Date(service.now()).toISOString(),
      lease_timelines: leaseTimelines,
      run_waterfalls: runWaterfalls,
      admin,
      monitors,
      subscriptions,
      leases,
      observation_types: [...observationTypes].sort(),
      runs: latestPerRun(recent.filter((o) => o.type === runType)).slice(0, 20),
      actors,
    },
    observationsFor,
  };
}

/** A run publishes `running` then its outcome: show each run once, as it stands now (newest first). */
function latestPerRun<T extends { subject: string | null }>(newestFirst: T[]): T[] {
  const seen = new Set<string | null>();
  return newestFirst.filter((o) => !seen.has(o.subject) && seen.add(o.subject));
}

function monitorOfActor(kind: string, key: string, context: Record<string, unknown>, byKey: Map<number, Feed>): string | undefined {
  if (kind === 'monitor' || kind === 'source') return key;
  const record = (context.subscription ?? context.lease) as { mkey?: number } | undefined;
  return record?.mkey === undefined ? undefined : byKey.get(record.mkey)?.id;
}
