// A subscription followed as a stream (§11): the backlog from the start
// cursor, then every matching observation as its commit lands, with
// heartbeats when idle. Streaming counts as pulling for mute retirement; it
// never commits the cursor.
import { asProtocolError, ProtocolError, invalid } from '../protocol/errors.ts';
import { assertNarrows, isEmptyFilter, parseFilter, type Filter } from '../protocol/filter.ts';
import { markRedelivered } from '../protocol/observation.ts';
import { validate } from '../protocol/validate.ts';
import { readWholeNumber } from '../protocol/wire-values.ts';
import type { Caller } from './access.ts';
import { defaults } from './defaults.ts';
import type { Feed, FeedFollower } from './feed.ts';
import type { MonitorService } from './service.ts';
import type { Ticking } from './stream-ticker.ts';
import type { SubscriptionWatcher } from './subscription-watchers.ts';
import { requireLive, standingFilters, startAfterReset, subscriptionFor, type SubscriptionHandle } from './subscription-handle.ts';

const batchRows = 1000;
const noFilters: readonly Filter[] = Object.freeze([]);

export interface StreamListener {
  /** Observation bodies (JSON text) in seq order; returns false when the reader is gone. */
  observations(batch: ReadonlyArray<{ seq: number; body: string }>): boolean;
  heartbeat(head: number, next: number): void;
  /** Whether the reader's connection has taken what was written, with room for about `bytes` more. */
  hasRoom(bytes: number): boolean;
  /** Calls `resume` once the connection has room again. */
  whenRoom(bytes: number, resume: () => void): void;
  /** The stream cannot go on (e.g. the subscription was retired); the door ends it. */
  failed(error: ProtocolError): void;
}

export class FeedStream implements FeedFollower, SubscriptionWatcher, Ticking {
  readonly feed: Feed;
  private readonly id: string;
  /** The token the stream was opened with: a re-keyed subscription ends the stream. */
  private readonly tokenHash: string;
  private readonly muteMs: number;
  private readonly maxShown: number;
  private next: number;
  private listener: StreamListener | undefined;
  private lastTrafficMs = 0;
  /** When the subscription's activity is next recorded (keeping it from mute retirement). */
  private nextActivityMs = 0;
  private closed = false;
  /** Whether the subscription was live with this token when last checked, and whether it changed since. */
  private live = true;
  private changed = false;
  /** Rows per read, sized from the rows seen so that one read holds about a piece of bytes. */
  private rowsPerRead = 16;
  /** Waiting for the reader's connection to take what was written before reading on. */
  private waiting = false;

  constructor(
    private readonly service: MonitorService,
    handle: SubscriptionHandle,
    private readonly filters: readonly Filter[],
    start: number,
  ) {
    // Only what the stream needs, not the handle: its actor may leave memory while the stream is open.
    this.feed = handle.feed;
    this.id = handle.id;
    this.tokenHash = handle.record.tokenHash;
    this.muteMs = handle.record.muteMs;
    this.maxShown = handle.record.maxShown;
    this.live = handle.live;
    this.next = Math.max(start, 1);
  }

  start(listener: StreamListener): void {
    this.listener = listener;
    this.feed.followers.add(this);
    this.service.watchers.add(this.id, this);
    this.noteTraffic();
    this.recordActivity(this.service.now());
    this.service.streamTicker.add(this);
    this.pump();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.feed.followers.delete(this);
    this.service.watchers.delete(this.id, this);
    this.service.streamTicker.delete(this);
  }

  /** The service's stream ticker: record activity when due, and a heartbeat after heartbeatMs without traffic. */
  tick(now: number): void {
    if (this.closed) return;
    if (now >= this.nextActivityMs) this.recordActivity(now);
    // A stream waiting on its reader has bytes on the way: no heartbeat needed.
    if (this.closed || this.waiting || now - this.lastTrafficMs < this.service.options.heartbeatMs) return;
    this.listener?.heartbeat(this.feed.committedHead, this.next);
    this.lastTrafficMs = now;
  }

  /** A commit stored observations on the stream's monitor. */
  committed(): void {
    this.pump();
  }

  /** The subscription was changed: check it again before the next delivery. */
  subscriptionChanged(): void {
    this.changed = true;
  }

  subscriptionsReloaded(): void {
    this.changed = true;
  }

  private isLive(): boolean {
    if (!this.changed) return this.live;
    this.changed = false;
    const current = this.service.subscriptionRows.current(this.id);
    this.live = current?.state === 'live' && current.record.tokenHash === this.tokenHash;
    return this.live;
  }

  private pump(): void {
    // While waiting for room, commits are read once the reader has taken what came before.
    if (this.closed || !this.listener || this.waiting) return;
    try {
      this.pumpBatches(this.listener);
    } catch (error) {
      // Never a silent stream: the reader gets the error event (a logged 500 with its request id).
      this.listener.failed(asProtocolError(error, `stream of ${this.id}`));
      this.close();
    }
  }

  private pumpBatches(listener: StreamListener): void {
    if (this.service.isClosed || !this.isLive()) {
      listener.failed(
        new ProtocolError('UNAVAILABLE', `Subscription "${this.id}" was retired or re-keyed; open the stream again with its current token.`, {
          live: false,
        }),
      );
      this.close();
      return;
    }
    for (;;) {
      // Written in pieces, each once the connection has taken the last: a backlog of any size
      // streams to a reader that keeps reading, and is never queued whole.
      if (!listener.hasRoom(defaults.streamPieceBytes)) {
        this.waiting = true;
        listener.whenRoom(defaults.streamPieceBytes, () => {
          this.waiting = false;
          this.pump();
        });
        return;
      }
      const feed = this.feed;
      const asked = this.rowsPerRead;
      const read =
        this.filters.length === 0
          ? feed.tail.read(this.service.store, feed.key, this.next, this.rowsPerRead, feed.committedHead, feed.stats.retention_floor)
          : this.service.store.readFeed(feed.key, this.next, this.rowsPerRead, this.filters, feed.committedHead);
      if (read.length === 0) {
        // Nothing matched up to head: skip past it so that the next read starts after what was examined.
        this.next = Math.max(this.next, this.feed.committedHead + 1);
        break;
      }
      // Reads are sized from the rows seen before; rows larger than those are cut to a piece here (one row at least).
      const rows = withinPiece(read);
      // Rows are in seq order: only a batch that starts at or below maxShown needs copies marked redelivered.
      const batch = rows[0]!.seq <= this.maxShown ? rows.map((r) => (r.seq <= this.maxShown ? { seq: r.seq, body: markRedelivered(r.body) } : r)) : rows;
      this.next = rows.at(-1)!.seq + 1;
      this.noteTraffic();
      if (!listener.observations(batch)) {
        this.close();
        return;
      }
      this.sizeReads(rows);
      // A short read reached head, unless rows of it were left for the next piece.
      if (read.length < asked && rows.length === read.length) {
        this.next = Math.max(this.next, this.feed.committedHead + 1);
        break;
      }
    }
  }

  private sizeReads(rows: ReadonlyArray<{ body: string }>): void {
    let bytes = 0;
    for (const row of rows) bytes += row.body.length;
    const average = Math.max(1, bytes / rows.length);
    this.rowsPerRead = Math.max(1, Math.min(batchRows, Math.floor(defaults.streamPieceBytes / average)));
  }

  /** Traffic postpones the heartbeat. */
  private noteTraffic(): void {
    this.lastTrafficMs = this.service.now();
  }

  /** An open stream keeps its subscription from mute retirement: activity is recorded a few times per mute period. */
  private recordActivity(now: number): void {
    if (this.closed || !this.isLive()) return;
    this.service.subscriptionRows.active(this.id, this.next - 1);
    this.nextActivityMs = now + Math.max(250, Math.min(this.service.options.heartbeatMs, Math.floor(this.muteMs / 3)));
  }
}

/** The first rows that hold at most a piece of bytes (always the first row), or all of them. */
function withinPiece<T extends { body: string }>(rows: ReadonlyArray<T>): ReadonlyArray<T> {
  let bytes = 0;
  for (let i = 0; i < rows.length; i++) {
    bytes += rows[i]!.body.length;
    if (bytes > defaults.streamPieceBytes && i > 0) return rows.slice(0, i);
  }
  return rows;
}

const streamParams = new Set(['cursor']);

/** Checks the request and the token before any byte of the stream is sent. */
export function openFeedStream(
  service: MonitorService,
  subscription: string,
  query: Record<string, unknown>,
  caller: Caller,
  lastEventId: string | undefined,
): FeedStream {
  const params = validate<{ subscription: string; cursor?: number }>('pull', {
    subscription,
    ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
  });
  const handle = subscriptionFor(service, params.subscription, caller);
  requireLive(handle);
  const ctx = { knownTypes: () => handle.feed.knownTypes(), splitCommas: true };
  const inline = parseFilter(Object.fromEntries(Object.entries(query).filter(([k]) => !streamParams.has(k))), ctx);
  assertNarrows(handle.record.filter, inline, ctx);
  let start = params.cursor ?? handle.record.cursor;
  if (lastEventId !== undefined) {
    const id = readWholeNumber(lastEventId.trim());
    if (id === undefined) throw invalid(`"Last-Event-ID" must be the seq of the last event received; got "${lastEventId}".`, { field: 'Last-Event-ID' });
    start = id + 1;
  }
  start = startAfterReset(service, handle, start, params.cursor !== undefined || lastEventId !== undefined);
  const filters = [...standingFilters(handle.feed, handle.record), inline].filter((f) => !isEmptyFilter(f));
  // Most streams have no filter: they share one empty list rather than keep one each.
  return new FeedStream(service, handle, filters.length === 0 ? noFilters : filters, start);
}
