// What a kind's watcher gets while it runs: its checked config, its stored
// cursor, and the way to write observations and report contact or failure.
// Every write goes through the service's observation writer, so it lands in
// the same group commit as the cursor that says it was written. On a cluster
// writes go through the source's ClusterWrites, in order, and survive lost
// races and a busy database.

import { redactCredentials } from '../net/redact.ts';
import type { Feed } from '../service/feed.ts';
import type { MonitorService } from '../service/service.ts';
import { stateDocument } from '../service/state-document.ts';
import type { ClusterWrites } from './cluster-writes.ts';
import type { SourceConfig } from './config.ts';
import type { Outbound } from './outbound.ts';

/** What every run of one source shares, across restarts after a failure. */
export interface SourceSetting {
  /** The folder file, shell and cir sources are confined to. */
  readonly root: string;
  /** How http, feed and ws sources connect out (checked against private addresses). */
  readonly outbound: Outbound;
  /** Cluster only: the source's writes waiting to be stored, in order. */
  readonly clusterWrites: ClusterWrites | undefined;
}

export interface SourceEmit {
  subject?: string | null;
  data: Record<string, unknown>;
  /** Stored with the observation: a restart resumes after it. */
  cursor?: unknown;
  sourceRef?: string | null;
  time?: string;
  /** False when this records losing the source (e.g. unreachable): it is not contact. */
  contact?: boolean;
}

export class SourceRun {
  private stoppedFlag = false;
  /** Set by windDown: no new poll starts, and the one in flight may still write. */
  private windingDownFlag = false;
  /** The poll `every` is awaiting, if any. */
  private inFlight: Promise<unknown> | undefined;
  readonly signal: AbortSignal;

  constructor(
    private readonly service: MonitorService,
    private readonly feed: Feed,
    readonly config: SourceConfig,
    private readonly setting: SourceSetting,
    private readonly controller: AbortController,
    private readonly report: (event: { type: 'CONTACT'; now: number } | { type: 'FAIL'; error: string }) => void,
  ) {
    this.signal = controller.signal;
  }

  /** The folder file, shell and cir sources are confined to. */
  get root(): string {
    return this.setting.root;
  }

  get outbound(): Outbound {
    return this.setting.outbound;
  }

  /** The checked config, typed by the kind that reads it. */
  settings<T>(): T {
    return this.config as unknown as T;
  }

  get monitor(): string {
    return this.feed.id;
  }

  get stopped(): boolean {
    return this.stoppedFlag || this.signal.aborted || this.feed.status !== 'active' || this.service.isClosed;
  }

  cursor<T>(): T | undefined {
    const pending = this.setting.clusterWrites?.pendingCursor;
    return (pending ? pending.value : this.feed.stats.source_cursor) as T | undefined;
  }

  setCursor(cursor: unknown): void {
    if (this.stopped) return;
    this.write(() => {
      this.feed.stats.source_cursor = cursor;
      this.service.persistMonitor(this.feed);
    }, cursor);
  }

  /** Winding down (a cluster node handing the monitor back): the actor is stopped, and the poll in flight finishes. */
  get windingDown(): boolean {
    return this.windingDownFlag;
  }

  /**
   * Lets the poll in flight finish and queue its write, starts no other, then stops the run (at once
   * when no poll is in flight; after `withinMs` whatever the poll's state). A node handing a monitor
   * back calls this so the answer it was waiting for is not lost: it still holds the monitor until
   * that write is stored.
   */
  windDown(withinMs: number): Promise<void> {
    this.windingDownFlag = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, withinMs);
      timer.unref();
    });
    return Promise.race([this.inFlight?.catch(() => {}), bound]).then(() => {
      clearTimeout(timer);
      this.controller.abort();
    });
  }

  /** Writes one observation as `source:<kind>` (origin system). */
  emit(item: SourceEmit): void {
    if (this.stopped) return;
    // Stamped now: on a cluster the write may be stored later, and the time is when the source saw it.
    const seen = { ...item, time: item.time ?? new Date(this.service.now()).toISOString() };
    this.write(() => this.append(seen), item.cursor);
    if (item.contact !== false) this.tell({ type: 'CONTACT', now: this.service.now() });
  }

  /** The source answered (nothing new to write): refreshes `since_last_source_contact_s`. */
  contact(): void {
    if (this.stopped) return;
    const now = this.service.now();
    this.write(() => {
      this.feed.stats.last_source_contact = new Date(now).toISOString();
      this.service.persistMonitor(this.feed);
    });
    this.tell({ type: 'CONTACT', now });
  }

  private append(item: SourceEmit): void {
    const kind = this.config.kind;
    const definition = this.feed.definition;
    const actor = `source:${kind}`;
    if (item.cursor !== undefined) this.feed.stats.source_cursor = item.cursor;
    const lastContact = this.feed.stats.last_source_contact;
    this.service.observations.append(
      this.feed,
      {
        type: definition.types[0] ?? `ai.vigil.source.${kind}`,
        subject: item.subject ?? null,
        time: item.time ?? new Date(this.service.now()).toISOString(),
        horizon: definition.horizon,
        provenance: {
          origin: 'system',
          tier: 'measured',
          verification: 'machine_verified',
          actor,
          on_behalf_of: null,
          attested: definition.attested,
          source_ref: item.sourceRef ?? null,
          wasDerivedFrom: [],
          wasAttributedTo: actor,
          supersedes: null,
        },
        data: item.data,
        tags: {},
      },
      'producer',
    );
    if (item.contact === false) this.feed.stats.last_source_contact = lastContact;
  }

  /** One node writes at once; on a cluster a change waits its turn and survives a lost race. */
  private write(change: () => void, cursor?: unknown): void {
    const writes = this.setting.clusterWrites;
    if (writes) writes.push(change, cursor);
    else change();
  }

  /** The source is lost: the actor backs off and starts the watcher again. */
  fail(error: unknown): void {
    if (this.stopped) return;
    this.stoppedFlag = true;
    // The message is shown (state, dashboard, inspector, logs): a URL in it loses its credentials.
    this.tell({ type: 'FAIL', error: redactCredentials(error instanceof Error ? error.message : String(error)) });
  }

  /** Contact and failure go to the source's actor, which is stopped once the run winds down. */
  private tell(event: { type: 'CONTACT'; now: number } | { type: 'FAIL'; error: string }): void {
    if (!this.windingDownFlag) this.report(event);
  }

  /** The state document of another monitor (formula inputs), or undefined when it is gone. */
  stateOf(id: string): ReturnType<typeof stateDocument> | undefined {
    const feed = this.service.feed(id);
    return feed ? stateDocument(this.service, feed) : undefined;
  }

  /** The last observation's data of another monitor (formula inputs). */
  lastDataOf(id: string): Record<string, unknown> | undefined {
    const feed = this.service.feed(id);
    if (!feed || feed.committedHead === 0) return undefined;
    const row = this.service.store.readFeed(feed.key, feed.committedHead, 1, [], feed.committedHead)[0];
    if (!row) return undefined;
    return (JSON.parse(row.body) as { data?: Record<string, unknown> }).data;
  }

  /** A timer that stops with the run. */
  every(ms: number, tick: () => void | Promise<void>): void {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const loop = async () => {
      if (this.stopped || this.windingDownFlag) return;
      try {
        this.inFlight = Promise.resolve(tick());
        await this.inFlight;
      } catch (error) {
        this.fail(error);
        return;
      } finally {
        this.inFlight = undefined;
      }
      if (!this.stopped && !this.windingDownFlag) timer = setTimeout(loop, ms);
    };
    this.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
    void loop();
  }

  abort(): void {
    this.controller.abort();
  }
}
