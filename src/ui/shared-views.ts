// The dashboard's live views, shared. Every viewer who may see the same thing
// (everyone without a token, the admin, each owner or subscribe token) reads
// one view, built at most every `minRebuildMs` however many watch it and
// framed and encoded once for all of them: a view built per viewer made 100
// anonymous viewers cost the server seconds per publication.
import { createHash } from 'node:crypto';
import { asProtocolError } from '../protocol/errors.ts';
import { type Caller, canSee, isOwner } from '../service/access.ts';
import type { MonitorService } from '../service/service.ts';
import { secretMatches } from '../service/tokens.ts';
import type { StreamSink } from '../transport/http-types.ts';
import type { AnyActorRef } from 'xstate';
import { type ChartTarget, chartedActor } from './chart-view.ts';
import type { ObservationFilter } from './observation-filter.ts';
import type { TransitionLog } from './transition-log.ts';
import { dashboardView, type RecentCache, type ViewBooks } from './view.ts';

/** What a stream asked to see besides its class's view: a statechart's actor and the observations' filter. */
export interface ViewOptions {
  chart?: ChartTarget;
  filter?: ObservationFilter;
}

/** What the dashboard keeps for the views: see view.ts, and the charts' transitions. */
export type Books = Omit<ViewBooks, 'filter'> & { transitions?: TransitionLog };

/** How often an open view looks for changes that wrote no observation (lease expiry, source state). */
const tickMs = 1000;
/** A view is rebuilt at most this often, however many commits arrive. */
const minRebuildMs = 250;
/** Viewers sent a frame in one event-loop turn. */
const broadcastBatch = 32;

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

class SharedView {
  readonly viewers = new Set<StreamSink>();
  builds = 0;
  private last = '';
  private frame: Uint8Array | undefined;
  private queued: ReturnType<typeof setTimeout> | undefined;
  private lastBuildMs = 0;
  private readonly tick: ReturnType<typeof setInterval>;
  private readonly stopRecorded: () => void;
  private readonly recent: RecentCache = new Map();
  private broadcasts = 0;

  // The charted actor's transitions are recorded while this view shows it (a restored actor is a new object).
  private followed: AnyActorRef | undefined;
  private unfollow: (() => void) | undefined;

  constructor(
    private readonly service: MonitorService,
    private readonly caller: Caller,
    private readonly onEmpty: () => void,
    private readonly books: Books = {},
    private readonly options: ViewOptions = {},
  ) {
    this.stopRecorded = service.onRecorded(() => this.soon());
    // A cluster node first catches up on every monitor, so that any node shows all of them.
    this.tick = setInterval(() => this.refreshed(), tickMs);
  }

  add(sink: StreamSink): void {
    this.viewers.add(sink);
    sink.onClose(() => this.remove(sink));
    sink.write('retry: 2000\n\n');
    if (this.frame) sink.write(this.frame);
    if (this.viewers.size === 1) this.refreshed();
  }

  private remove(sink: StreamSink): void {
    if (!this.viewers.delete(sink) || this.viewers.size > 0) return;
    this.close();
    this.onEmpty();
  }

  close(): void {
    this.unfollow?.();
    this.stopRecorded();
    clearInterval(this.tick);
    clearTimeout(this.queued);
    this.queued = undefined;
  }

  private refreshed(): void {
    const { cluster } = this.service;
    if (!cluster) this.soon();
    else {
      cluster.refreshAll().then(
        () => this.soon(),
        () => this.soon(),
      );
    }
  }

  /** Coalesced: a burst of commits, or a tick among them, makes one build. */
  private soon(): void {
    if (this.queued !== undefined || this.viewers.size === 0) return;
    const wait = Math.max(0, this.lastBuildMs + minRebuildMs - Date.now());
    this.queued = setTimeout(() => this.build(), wait);
  }

  private build(): void {
    this.queued = undefined;
    if (this.viewers.size === 0 || this.service.isClosed) return;
    this.lastBuildMs = Date.now();
    this.builds++;
    let asOf: string;
    let text: string;
    try {
      const { as_of, ...view } = this.view();
      asOf = as_of;
      text = JSON.stringify(view);
    } catch (error) {
      asProtocolError(error, 'the dashboard view'); // logs it with a request id
      for (const sink of [...this.viewers]) sink.end();
      return;
    }
    // Sent only when something other than the time changed: a frame is the whole view, to every viewer.
    if (text === this.last) return;
    this.last = text;
    this.frame = Buffer.from(`id: ${this.builds}\nevent: view\ndata: {"as_of":${JSON.stringify(asOf)},${text.slice(1)}\n\n`);
    this.broadcast();
  }

  private view() {
    const { transitions, ...books } = this.books;
    const view = dashboardView(this.service, this.caller, this.recent, { ...books, filter: this.options.filter });
    const { chart } = this.options;
    if (!chart || !transitions) return view;
    const follow = (actor: AnyActorRef) => {
      if (actor === this.followed) return;
      this.unfollow?.();
      this.followed = actor;
      this.unfollow = transitions.follow(actor);
    };
    return { ...view, chart: chartedActor(this.service, transitions, view.actors, chart, follow) };
  }

  /**
   * Sends the latest frame to every viewer, a batch per event-loop turn, so
   * that requests are answered between batches however many watch. A newer
   * frame started meanwhile takes over the viewers not yet reached.
   */
  private broadcast(): void {
    const generation = ++this.broadcasts;
    const sinks = [...this.viewers];
    let next = 0;
    const step = () => {
      if (generation !== this.broadcasts || this.frame === undefined) return;
      const end = Math.min(next + broadcastBatch, sinks.length);
      for (; next < end; next++) if (!sinks[next]!.closed) sinks[next]!.write(this.frame);
      if (next < sinks.length) setImmediate(step);
    };
    step();
  }
}

export interface ViewerCaps {
  /** Viewers without a token (or with one that opens no monitor), all together. */
  readonly anonymous: number;
  /** Viewers with the admin token or a monitor's token, all together. */
  readonly withToken: number;
}

export type Refusal = { kind: 'anonymous' | 'token'; limit: number };

/** The open views by viewer class, and the caps on how many may watch them. */
export class SharedViews {
  private readonly views = new Map<string, SharedView>();
  private readonly open = { anonymous: 0, token: 0 };

  constructor(
    private readonly service: MonitorService,
    private readonly caps: ViewerCaps,
    private readonly books: Books = {},
  ) {}

  /** Whether one more viewer of this caller's kind fits under its cap. */
  refusal(caller: Caller): Refusal | undefined {
    const kind = viewerClassOf(this.service, caller).kind === 'anonymous' ? 'anonymous' : 'token';
    const limit = kind === 'anonymous' ? this.caps.anonymous : this.caps.withToken;
    return this.open[kind] >= limit ? { kind, limit } : undefined;
  }

  /** Joins an opened stream to its class's view; false (the stream ended) when its cap filled meanwhile. */
  join(caller: Caller, sink: StreamSink, options: ViewOptions = {}): boolean {
    if (sink.closed) return false;
    const viewer = viewerClassOf(this.service, caller);
    const kind = viewer.kind === 'anonymous' ? 'anonymous' : 'token';
    if (this.refusal(caller)) {
      sink.end();
      return false;
    }
    this.open[kind]++;
    sink.onClose(() => this.open[kind]--);
    // Streams of one class that ask for the same chart and filter share a view too.
    const f = options.filter;
    const custom = options.chart !== undefined || (f !== undefined && (f.bookkeeping || f.type || f.subject || f.actor));
    const asked = custom ? `|${JSON.stringify([options.chart ?? null, f ?? null])}` : '';
    const key = `${classKey(viewer)}${asked}`;
    let view = this.views.get(key);
    if (!view) {
      view = new SharedView(this.service, kind === 'anonymous' ? {} : { bearer: caller.bearer }, () => this.views.delete(key), this.books, options);
      this.views.set(key, view);
    }
    view.add(sink);
    return true;
  }

  /** What is open now: per class, its viewers and how many times its view was built. */
  stats(): { viewers: { anonymous: number; withToken: number }; views: Record<string, { viewers: number; builds: number }> } {
    const views: Record<string, { viewers: number; builds: number }> = {};
    for (const [key, view] of this.views) views[key.startsWith('token:') ? key.slice(0, 14) : key] = { viewers: view.viewers.size, builds: view.builds };
    return { viewers: { anonymous: this.open.anonymous, withToken: this.open.token }, views };
  }

  close(): void {
    for (const view of this.views.values()) view.close();
    this.views.clear();
  }
}
