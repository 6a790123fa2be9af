// The dashboard's live views, shared. Every viewer who may see the same thing
// (everyone without a token, the admin, each owner or subscribe token) reads
// one view, built at most every 250 ms however many watch it and framed and
// encoded once per filter for all of them (shared-view.ts): a view built per
// viewer made 100 anonymous viewers cost the server seconds per publication.
//
// How many may watch is capped (issue 42): viewers without a token and with
// one each have a cap over all of them, and so do one client (its /24 or /64)
// and one token below it, so that one client or one token's streams cannot
// lock everyone else out; the admin has places of its own that nobody else
// takes. Each filter or statechart asked for is one more frame to build per
// rebuild, so distinct ones are capped per class and per client.
import { createHash } from 'node:crypto';
import { type Caller, canSee, isOwner } from '../service/access.ts';
import { networkOf } from '../service/client-limits.ts';
import type { MonitorService } from '../service/service.ts';
import { secretMatches } from '../service/tokens.ts';
import type { StreamSink } from '../transport/http-types.ts';
import type { ChartTarget } from './chart-view.ts';
import type { ObservationFilter } from './observation-filter.ts';
import { RecentRows } from './recent-rows.ts';
import { type Books, SharedView } from './shared-view.ts';

export type { Books } from './shared-view.ts';

/** What a stream asked to see besides its class's view: a statechart's actor and the observations' filter. */
export interface ViewOptions {
  chart?: ChartTarget;
  filter?: ObservationFilter;
}

/** Who a viewer is to the dashboard: its view is shared with everyone of the same class. */
export type ViewerClass = { kind: 'anonymous' } | { kind: 'admin' } | { kind: 'token'; id: string };

/** A token that opens no monitor (owns none, sees no private one) shows what no token shows, and counts as anonymous. */
export function viewerClassOf(service: MonitorService, caller: Caller): ViewerClass {
  const { bearer } = caller;
  if (!bearer) return { kind: 'anonymous' };
  const admin = service.options.adminToken;
  if (admin !== undefined && secretMatches(bearer, admin)) return { kind: 'admin' };
  for (const feed of service.allFeeds()) {
    if (isOwner(feed, caller) || (feed.definition.visibility !== 'public' && canSee(feed, caller))) {
      return { kind: 'token', id: createHash('sha256').update(bearer).digest('hex') };
    }
  }
  return { kind: 'anonymous' };
}

const classKey = (c: ViewerClass) => (c.kind === 'token' ? `token:${c.id}` : c.kind);

export interface ViewerCaps {
  /** Viewers without a token (or with one that opens no monitor), all together. */
  readonly anonymous: number;
  /** Viewers with a monitor's token, all together. */
  readonly withToken: number;
  /** Viewers with the admin token: places nobody else takes. */
  readonly admin: number;
  /** Viewers of one client (its /24 or /64), with a monitor's token or none. */
  readonly perClient: number;
  /** Viewers presenting one monitor's token. */
  readonly perToken: number;
  /** Distinct filtered or charted views open for one class. */
  readonly filteredPerClass: number;
  /** Distinct filtered or charted views one client has open. */
  readonly filteredPerClient: number;
}

export type Refusal = { kind: 'anonymous' | 'token' | 'admin' | 'client' | 'per-token' | 'filtered-class' | 'filtered-client'; limit: number; who?: string };

/** What one viewer asks for, resolved once. */
interface Ask {
  readonly viewer: ViewerClass;
  readonly kind: 'anonymous' | 'token' | 'admin';
  readonly client: string;
  /** The view (class and chart) and the filter within it; `custom` when either differs from the class's plain view. */
  readonly viewKey: string;
  readonly filterKey: string;
  readonly custom: boolean;
}

const bump = (counts: Map<string, number>, key: string, by: number) => {
  const n = (counts.get(key) ?? 0) + by;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
};

/** The open views by viewer class, and the caps on how many may watch them. */
export class SharedViews {
  private readonly views = new Map<string, SharedView>();
  private readonly recent: RecentRows;
  private readonly open = { anonymous: 0, token: 0, admin: 0 };
  private readonly byClient = new Map<string, number>();
  private readonly byToken = new Map<string, number>();
  /** Per client, its viewers of each custom view (view and filter). */
  private readonly customByClient = new Map<string, Map<string, number>>();

  constructor(
    private readonly service: MonitorService,
    private readonly caps: ViewerCaps,
    private readonly books: Books = {},
  ) {
    this.recent = new RecentRows(service);
  }

  private ask(caller: Caller, options: ViewOptions): Ask {
    const viewer = viewerClassOf(this.service, caller);
    const f = options.filter;
    const filtered = f !== undefined && (f.bookkeeping || f.type !== undefined || f.subject !== undefined || f.actor !== undefined);
    const filterKey = filtered ? JSON.stringify([f.type ?? null, f.subject ?? null, f.actor ?? null, f.bookkeeping]) : '';
    const viewKey = `${classKey(viewer)}${options.chart === undefined ? '' : `|${JSON.stringify(options.chart)}`}`;
    return { viewer, kind: viewer.kind, client: networkOf(caller.address ?? ''), viewKey, filterKey, custom: filtered || options.chart !== undefined };
  }

  /** Distinct custom views (a chart, or a filter within a view) open for the class of `viewKey`. */
  private customViewsOf(classPrefix: string): Set<string> {
    const custom = new Set<string>();
    for (const [key, view] of this.views) {
      if (key !== classPrefix && !key.startsWith(`${classPrefix}|`)) continue;
      for (const filterKey of view.filterKeys()) if (key !== classPrefix || filterKey !== '') custom.add(`${key}#${filterKey}`);
    }
    return custom;
  }

  /** Why one more viewer of this caller, asking for these, does not fit now; undefined when it does. */
  refusal(caller: Caller, options: ViewOptions = {}): Refusal | undefined {
    return this.refusalOf(this.ask(caller, options));
  }

  private refusalOf(ask: Ask): Refusal | undefined {
    const { caps } = this;
    if (ask.kind === 'admin') return this.open.admin >= caps.admin ? { kind: 'admin', limit: caps.admin } : undefined;
    const global = ask.kind === 'anonymous' ? caps.anonymous : caps.withToken;
    if (this.open[ask.kind] >= global) return { kind: ask.kind, limit: global };
    if ((this.byClient.get(ask.client) ?? 0) >= caps.perClient) return { kind: 'client', limit: caps.perClient, who: ask.client };
    if (ask.viewer.kind === 'token' && (this.byToken.get(ask.viewer.id) ?? 0) >= caps.perToken) return { kind: 'per-token', limit: caps.perToken };
    if (!ask.custom) return undefined;
    const wanted = `${ask.viewKey}#${ask.filterKey}`;
    const ofClient = this.customByClient.get(ask.client);
    if (!ofClient?.has(wanted) && (ofClient?.size ?? 0) >= caps.filteredPerClient) return { kind: 'filtered-client', limit: caps.filteredPerClient, who: ask.client };
    const ofClass = this.customViewsOf(classKey(ask.viewer));
    if (!ofClass.has(wanted) && ofClass.size >= caps.filteredPerClass) return { kind: 'filtered-class', limit: caps.filteredPerClass };
    return undefined;
  }

  /** Joins an opened stream to its class's view; false (the stream ended) when a cap filled meanwhile. */
  join(caller: Caller, sink: StreamSink, options: ViewOptions = {}): boolean {
    if (sink.closed) return false;
    const ask = this.ask(caller, options);
    if (this.refusalOf(ask)) {
      sink.end();
      return false;
    }
    this.count(ask, 1);
    sink.onClose(() => this.count(ask, -1));
    let view = this.views.get(ask.viewKey);
    if (!view) {
      const key = ask.viewKey;
      const viewer = ask.kind === 'anonymous' ? {} : { bearer: caller.bearer };
      view = new SharedView(this.service, viewer, this.recent, () => this.views.delete(key), this.books, options.chart);
      this.views.set(key, view);
    }
    view.add(sink, ask.filterKey, options.filter ?? { bookkeeping: false });
    return true;
  }

  private count(ask: Ask, by: 1 | -1): void {
    this.open[ask.kind] += by;
    if (ask.kind === 'admin') return;
    bump(this.byClient, ask.client, by);
    if (ask.viewer.kind === 'token') bump(this.byToken, ask.viewer.id, by);
    if (!ask.custom) return;
    const ofClient = this.customByClient.get(ask.client) ?? new Map<string, number>();
    this.customByClient.set(ask.client, ofClient);
    bump(ofClient, `${ask.viewKey}#${ask.filterKey}`, by);
    if (ofClient.size === 0) this.customByClient.delete(ask.client);
  }

  /** What is open now: per class, its viewers and how many times its view was built. */
  stats(): { viewers: { anonymous: number; withToken: number }; views: Record<string, { viewers: number; builds: number; filters: number }> } {
    const views: Record<string, { viewers: number; builds: number; filters: number }> = {};
    for (const [key, view] of this.views) {
      views[key.startsWith('token:') ? key.slice(0, 14) : key] = { viewers: view.viewers, builds: view.builds, filters: view.filterKeys().length };
    }
    return { viewers: { anonymous: this.open.anonymous, withToken: this.open.token + this.open.admin }, views };
  }

  close(): void {
    for (const view of this.views.values()) view.close();
    this.views.clear();
  }
}
