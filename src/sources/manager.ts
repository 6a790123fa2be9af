// Runs the live sources (§18): one source actor under the root system per
// active monitor whose source the server runs. It keeps them in step with the
// monitors: started on create, resume and server start, restarted when the
// source changes, stopped on pause and retire.
import { fromCallback } from 'xstate';
import { type SourceEvent, type SourceInput, sourceMachine } from '../machines/source-machine.ts';
import { invalid } from '../protocol/errors.ts';
import { canSee } from '../service/access.ts';
import type { Feed } from '../service/feed.ts';
import type { MonitorService, SourceHooks } from '../service/service.ts';
import { secretMatches } from '../service/tokens.ts';
import { checkSource, isLive, type SourceConfig, type SourcePolicy } from './config.ts';
import { ClusterWrites } from './cluster-writes.ts';
import { runners } from './kinds/index.ts';
import { Outbound } from './outbound.ts';
import { SourceRun, type SourceSetting } from './run.ts';

export interface SourceManagerOptions extends SourcePolicy {
  /** First backoff delay after a failure (doubles up to maxBackoffMs). */
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly log?: (line: string) => void;
}

export class SourceManager implements SourceHooks {
  /** monitor id → the source config its actor runs (as JSON, to see changes). */
  private readonly running = new Map<string, string>();
  /** The one way http, feed and ws sources connect out. */
  private readonly outbound: Outbound;
  /** Cluster only: monitor id → its source's writes waiting to be stored, kept across restarts of the source so they stay in order. */
  private readonly clusterWrites = new Map<string, ClusterWrites>();
  /** monitor id → the run its actor started last (the one a handback winds down). */
  private readonly runs = new Map<string, SourceRun>();
  /** Cluster only: monitor id → a handed-back source's poll in flight, finishing. */
  private readonly windingDown = new Map<string, Promise<void>>();
  private closed = false;

  constructor(
    private readonly service: MonitorService,
    private readonly options: SourceManagerOptions,
  ) {
    this.outbound = new Outbound(options.allowPrivate);
  }

  /** Hooks into the service and starts the sources of the monitors already stored. */
  attach(): this {
    this.service.attachSources(this);
    for (const feed of this.service.allFeeds()) this.changed(feed);
    return this;
  }

  check(source: SourceConfig, caller: { bearer?: string }): SourceConfig {
    const admin = this.service.options.adminToken;
    const checked = checkSource(source, this.options, admin !== undefined && secretMatches(caller.bearer, admin));
    if (checked.kind === 'formula' && isLive(checked)) {
      for (const [i, id] of (checked.inputs as string[]).entries()) {
        const input = this.service.feed(id);
        if (!input || !canSee(input, caller)) {
          throw invalid(`"source.inputs.${i}": no monitor "${id}" is visible to this token.`, { field: `source.inputs.${i}` });
        }
      }
    }
    return checked;
  }

  runsSource(id: string): boolean {
    return this.running.has(id);
  }

  changed(feed: Feed): void {
    const source = feed.definition.source;
    // On a cluster the node owning the monitor runs its source; the others leave it alone.
    const here = this.service.cluster?.runsTimersOf(feed.key) ?? true;
    const wanted = feed.status === 'active' && isLive(source) && this.enabled(source.kind) && here;
    if (feed.status === 'active' && isLive(source) && here && !wanted && !this.running.has(feed.id)) {
      this.options.log?.(`vigil: monitor ${feed.id} has a ${source.kind} source, which this server does not run (see --sources); it is not watched`);
    }
    const current = this.running.get(feed.id);
    const config = JSON.stringify(source);
    if (wanted && current === config) return;
    if (current !== undefined) this.stop(feed.id);
    if (!wanted) return;
    this.start(feed, source);
  }

  private enabled(kind: string): boolean {
    return this.options.kinds.has(kind) || (kind === 'shell' && this.options.allowShell);
  }

  private start(feed: Feed, source: SourceConfig): void {
    const load = runners[source.kind];
    if (!load) return;
    const { service } = this;
    const setting: SourceSetting = { root: this.options.root, outbound: this.outbound, clusterWrites: this.clusterWritesOf(feed) };
    const logic = sourceMachine.provide({
      actors: {
        watch: fromCallback<SourceEvent, SourceInput>(({ sendBack }) => {
          const controller = new AbortController();
          const run = new SourceRun(service, feed, source, setting, controller, (event) => {
            if (!controller.signal.aborted) sendBack(event);
          });
          this.runs.set(feed.id, run);
          load()
            .then((runner) => runner(run))
            .catch((error: unknown) => run.fail(error));
          return () => {
            if (this.runs.get(feed.id) === run) this.runs.delete(feed.id);
            // A run winding down stops itself once its poll in flight is done.
            if (!run.windingDown) controller.abort();
          };
        }),
      },
    });
    service.system.addSource(feed.id, logic, {
      monitor: feed.id,
      kind: source.kind,
      minBackoffMs: this.options.minBackoffMs,
      maxBackoffMs: this.options.maxBackoffMs,
    });
    this.running.set(feed.id, JSON.stringify(source));
  }

  private clusterWritesOf(feed: Feed): ClusterWrites | undefined {
    const { service } = this;
    if (!service.cluster) return undefined;
    let writes = this.clusterWrites.get(feed.id);
    if (!writes) {
      writes = new ClusterWrites(service.cluster, {
        mkey: feed.key,
        describe: () => `the ${feed.definition.source?.kind ?? 'live'} source on monitor ${feed.id}`,
        // Once another node owns the monitor its source resumes there from the stored cursor: writes queued here would repeat it.
        // Still wanted while the node hands the monitor back: it holds the token until they are stored.
        wanted: () => feed.status === 'active' && !this.closed && !service.isClosed && service.cluster!.ownerToken(feed.key) !== undefined,
        closing: () => this.closed || service.isClosed,
        settle: () => service.settle(),
        log: (line) => service.log(line),
        idle: () => this.forgetWritesIfUnused(feed.id),
      });
      this.clusterWrites.set(feed.id, writes);
    }
    return writes;
  }

  /**
   * A cluster node hands the monitor back to the node it is now assigned to: its source stops here,
   * but a poll in flight may finish (within `pollWithinMs`) and queue what it saw, which drained()
   * then waits for. Stopping it at once would lose the answer the target was giving.
   */
  handBack(feed: Feed, pollWithinMs: number): void {
    const run = this.runs.get(feed.id);
    if (run && !this.windingDown.has(feed.id)) {
      const finished = run.windDown(pollWithinMs).finally(() => {
        if (this.windingDown.get(feed.id) === finished) this.windingDown.delete(feed.id);
      });
      this.windingDown.set(feed.id, finished);
    }
    this.changed(feed);
  }

  /** Resolves once the monitor's stopped source finished its poll in flight and the writes it queued on this cluster node are stored or given up. */
  async drained(mkey: number): Promise<void> {
    const id = this.service.feedByKey(mkey)?.id;
    if (id === undefined) return;
    await this.windingDown.get(id);
    await this.clusterWrites.get(id)?.whenIdle();
    this.forgetWritesIfUnused(id);
  }

  /** A source's queue of cluster writes goes once nothing uses it: the source is not running or finishing, and nothing waits to be stored. */
  private forgetWritesIfUnused(id: string): void {
    const writes = this.clusterWrites.get(id);
    if (writes && !writes.busy && !this.running.has(id) && !this.windingDown.has(id)) this.clusterWrites.delete(id);
  }

  private stop(id: string): void {
    this.running.delete(id);
    this.forgetWritesIfUnused(id);
    const actor = this.service.system.sources.isResident(id) ? this.service.system.sources.get(id) : undefined;
    actor?.send({ type: 'STOP' });
    this.service.system.sources.evict(id);
  }

  close(): void {
    this.closed = true;
    for (const writes of this.clusterWrites.values()) writes.abandon();
    for (const id of [...this.running.keys()]) this.stop(id);
    void this.outbound.close();
  }
}
