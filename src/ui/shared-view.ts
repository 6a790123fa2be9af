// One live dashboard view, shared by every viewer of one class (everyone
// without a token, the admin, each owner or subscribe token) who asked for
// the same statechart: built at most every `minRebuildMs` however many watch
// it, and framed and encoded once per Observations filter its viewers asked
// for. The view is built once per rebuild; each filter only picks its rows
// from the shared recent rows (recent-rows.ts), with no query of its own.
import { asProtocolError } from '../protocol/errors.ts';
import type { Caller } from '../service/access.ts';
import type { MonitorService } from '../service/service.ts';
import type { StreamSink } from '../transport/http-types.ts';
import type { AnyActorRef } from 'xstate';
import { type ChartTarget, chartedActor } from './chart-view.ts';
import type { ObservationFilter } from './observation-filter.ts';
import type { RecentRows } from './recent-rows.ts';
import type { TransitionLog } from './transition-log.ts';
import { dashboardView, type ViewBooks } from './view.ts';

/** What the dashboard keeps for the views: see view.ts, and the charts' transitions. */
export type Books = ViewBooks & { transitions?: TransitionLog };

/** How often an open view looks for changes that wrote no observation (lease expiry, source state). */
const tickMs = 1000;
/** A view is rebuilt at most this often, however many commits arrive. */
const minRebuildMs = 250;
/** Viewers sent a frame in one event-loop turn. */
const broadcastBatch = 32;

/** The viewers of one Observations filter, and the last frame they were sent. */
interface Variant {
  readonly filter: ObservationFilter;
  readonly viewers: Set<StreamSink>;
  last: string;
  frame: Uint8Array | undefined;
  broadcasts: number;
}

export class SharedView {
  builds = 0;
  private readonly variants = new Map<string, Variant>();
  private queued: ReturnType<typeof setTimeout> | undefined;
  private lastBuildMs = 0;
  private readonly tick: ReturnType<typeof setInterval>;
  private readonly stopRecorded: () => void;

  // The charted actor's transitions are recorded while this view shows it (a restored actor is a new object).
  private followed: AnyActorRef | undefined;
  private unfollow: (() => void) | undefined;

  constructor(
    private readonly service: MonitorService,
    private readonly caller: Caller,
    private readonly recent: RecentRows,
    private readonly onEmpty: () => void,
    private readonly books: Books = {},
    private readonly chart?: ChartTarget,
  ) {
    this.stopRecorded = service.on('recorded', () => this.soon());
    // A cluster node first catches up on every monitor, so that any node shows all of them.
    this.tick = setInterval(() => this.refreshed(), tickMs);
  }

  get viewers(): number {
    let n = 0;
    for (const variant of this.variants.values()) n += variant.viewers.size;
    return n;
  }

  /** The filters its viewers asked for, by key ('' is the default: bookkeeping folded, nothing else). */
  filterKeys(): string[] {
    return [...this.variants.keys()];
  }

  add(sink: StreamSink, key: string, filter: ObservationFilter): void {
    let variant = this.variants.get(key);
    if (!variant) {
      variant = { filter, viewers: new Set(), last: '', frame: undefined, broadcasts: 0 };
      this.variants.set(key, variant);
    }
    variant.viewers.add(sink);
    sink.onClose(() => this.remove(sink, key));
    sink.write('retry: 2000\n\n');
    if (variant.frame) sink.write(variant.frame);
    else this.refreshed();
  }

  private remove(sink: StreamSink, key: string): void {
    const variant = this.variants.get(key);
    if (!variant?.viewers.delete(sink) || variant.viewers.size > 0) return;
    this.variants.delete(key);
    if (this.variants.size > 0) return;
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
    if (this.queued !== undefined || this.variants.size === 0) return;
    const wait = Math.max(0, this.lastBuildMs + minRebuildMs - Date.now());
    this.queued = setTimeout(() => this.build(), wait);
  }

  private build(): void {
    this.queued = undefined;
    if (this.variants.size === 0 || this.service.isClosed) return;
    this.lastBuildMs = Date.now();
    this.builds++;
    try {
      const { as_of, rest, observationsFor } = this.view();
      const asOf = JSON.stringify(as_of);
      // The view once as text; each filter adds its own rows in front.
      const restText = JSON.stringify(rest).slice(1);
      for (const variant of this.variants.values()) {
        const text = `{"observations":${JSON.stringify(observationsFor(variant.filter))},${restText}`;
        // Sent only when something other than the time changed: a frame is the whole view, to every viewer.
        if (text === variant.last) continue;
        variant.last = text;
        variant.frame = Buffer.from(`id: ${this.builds}\nevent: view\ndata: {"as_of":${asOf},${text.slice(1)}\n\n`);
        this.broadcast(variant);
      }
    } catch (error) {
      asProtocolError(error, 'the dashboard view'); // logs it with a request id
      for (const variant of this.variants.values()) for (const sink of [...variant.viewers]) sink.end();
    }
  }

  private view() {
    const { transitions, ...books } = this.books;
    const { view, observationsFor } = dashboardView(this.service, this.caller, this.recent, books);
    const { as_of, ...rest } = view;
    const { chart } = this;
    if (!chart || !transitions) return { as_of, rest, observationsFor };
    const follow = (actor: AnyActorRef) => {
      if (actor === this.followed) return;
      this.unfollow?.();
      this.followed = actor;
      this.unfollow = transitions.follow(actor);
    };
    return { as_of, rest: { ...rest, chart: chartedActor(this.service, transitions, view.actors, chart, follow) }, observationsFor };
  }

  /**
   * Sends the variant's latest frame to its viewers, a batch per event-loop
   * turn, so that requests are answered between batches however many watch. A
   * newer frame started meanwhile takes over the viewers not yet reached.
   */
  private broadcast(variant: Variant): void {
    const generation = ++variant.broadcasts;
    const sinks = [...variant.viewers];
    let next = 0;
    const step = () => {
      if (generation !== variant.broadcasts || variant.frame === undefined) return;
      const end = Math.min(next + broadcastBatch, sinks.length);
      for (; next < end; next++) if (!sinks[next]!.closed) sinks[next]!.write(variant.frame);
      if (next < sinks.length) setImmediate(step);
    };
    step();
  }
}
