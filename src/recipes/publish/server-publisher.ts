// Publishes a run's lifecycle, and a daemon's firings and reactions, to the
// project's run monitor on a Vigil server (run-monitor.ts), so that runs can
// be followed with `vigil watch`, the dashboard and `@runs` sentinels. Each
// observation names the client that acted (src/protocol/client-actor.ts).
//
// Publishing never fails a run nor holds it up for long. A publish the server
// does not take starts an outage, said once: observations are queued (up to
// 1,000) and tried again, in order, after a wait that doubles up to a minute;
// the first that goes through says the server is back. A run's end tries what
// is pending once more; what is still pending then is kept under the Vigil home
// (unpublished.ts) for the next run or daemon of the project, which publishes
// it first, and what cannot be kept is said given up. A server that answers that
// the monitor is not there (restarted without its state) gets it made again
// at once. A daemon runs for days: one restart of its server once stopped its
// publishing until the daemon itself was restarted.
import { onBehalfOfOwner } from '../../protocol/client-actor.ts';
import { ServerError, serverClient, UnreachableError } from '../../server-client/server-client.ts';
import { answerWithinMs, type CachedMonitor, openRunMonitor, type RunMonitorPlace, type ServerConfig } from './run-monitor.ts';
import { keepUnpublished, takeUnpublished, unpublishedFile } from './unpublished.ts';

/** The wait after a failed publish before the next try, doubled after each failure up to the most. */
const firstRetryMs = 1000;
const mostRetryMs = 60_000;
/** Observations held while the server is away; past them, new ones are counted and dropped. */
const mostPending = 1000;

interface Outage {
  sinceMs: number;
  /** The last try got no answer in time: a run's end does not wait for another. */
  unanswered: boolean;
  /** The pending observations are tried again from then on. */
  retryAtMs: number;
  waitMs: number;
}

interface Observation {
  type: string;
  subject: string;
  data: Record<string, unknown>;
  actor: string;
}

export class ServerPublisher {
  private readonly pending: Observation[] = [];
  /** Observations dropped because the queue was full. */
  private dropped = 0;
  private draining: Promise<void> = Promise.resolve();
  private outage: Outage | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** Refusals said so far (each is said once). */
  private readonly refusals = new Set<string>();
  /** Publishes what earlier runs kept and keeps what it cannot publish (runs and daemons; not a sentinel's look at its monitor). */
  private keeps = false;
  /** Removes the file of kept observations this publisher took, once they are published or kept again. */
  private releaseTaken: (() => void) | undefined;
  /** How many of `pending` (at its front) earlier runs kept: they do not count against the queue's limit. */
  private keptAhead = 0;

  private constructor(
    private readonly place: RunMonitorPlace,
    /** Null until the run monitor is opened: a publisher made while its server was away opens it on its first publish. */
    private target: CachedMonitor | null,
    private readonly warn: (line: string) => void,
    /** The actor of an observation published without one. */
    private readonly actor: string,
  ) {}

  /**
   * `actor` names the client for observations published without their own
   * (`vigil daemon`, `vigil notify`); a run passes each run's and step's.
   */
  static async connect(
    server: ServerConfig,
    projectRoot: string,
    warn: (line: string) => void,
    actor = 'agent:vigil',
    /**
     * `keepTrying`: a server away at the start is an outage like any later one. `keepUnpublished`: what
     * earlier runs of the project could not publish goes first, and what this one cannot is kept (both
     * for runs and daemons, whose ends a sentinel on `@runs` waits for).
     */
    options: { keepTrying?: boolean; keepUnpublished?: boolean } = {},
  ): Promise<ServerPublisher | null> {
    const base = server.base.replace(/\/+$/, '');
    const place: RunMonitorPlace = { server, base, projectRoot, client: serverClient(base) };
    let publisher: ServerPublisher;
    try {
      publisher = new ServerPublisher(place, await openRunMonitor(place, warn), warn, actor);
    } catch (error) {
      if (!options.keepTrying || refusedForGood(error)) {
        warn(`vigil: cannot publish this run to ${base}: ${(error as Error).message}; the run goes on without it`);
        return null;
      }
      publisher = new ServerPublisher(place, null, warn, actor);
      publisher.awayAfter(error, undefined);
    }
    if (options.keepUnpublished) publisher.takeKept();
    return publisher;
  }

  /** Queues, ahead of anything new, what earlier runs of the project kept for this server. */
  private takeKept(): void {
    this.keeps = true;
    let taken: ReturnType<typeof takeUnpublished>;
    try {
      taken = takeUnpublished(this.place.projectRoot, this.place.base);
    } catch (error) {
      this.warn(`vigil: cannot read what earlier runs of this project could not publish (${unpublishedFile(this.place.projectRoot)}): ${(error as Error).message}`);
      return;
    }
    const { observations, done } = taken;
    if (observations.length === 0) return;
    this.releaseTaken = done;
    this.pending.unshift(...observations);
    this.keptAhead = observations.length;
    this.warn(`vigil: ${observations.length} ${observations.length === 1 ? 'observation' : 'observations'} that earlier runs of this project could not publish ${observations.length === 1 ? 'goes' : 'go'} out first`);
    if (!this.outage) this.drain();
  }

  /** The run monitor, once opened. */
  get monitorId(): string | null {
    return this.target?.id ?? null;
  }

  /**
   * The monitor and its owner token, for a sentinel of this project that
   * watches its runs (watch.monitor "@runs"). A monitor made before run
   * monitors offered "act" gets it here, with the owner token.
   */
  async ownMonitor(): Promise<{ monitor: string; token: string }> {
    this.target ??= await openRunMonitor(this.place, this.warn);
    const { id, owner_token: token } = this.target;
    const { client } = this.place;
    const body = (await client.request('GET', `/monitors/${id}`, { token, timeoutMs: answerWithinMs })) as { capabilities?: string[]; monitor?: { capabilities?: string[] } };
    const capabilities = body.monitor?.capabilities ?? body.capabilities ?? [];
    if (!capabilities.includes('act')) {
      await client.request('POST', `/monitors/${id}/update`, {
        token,
        timeoutMs: answerWithinMs,
        body: { reason: 'a sentinel of this project watches its runs', patch: { capabilities: [...new Set([...capabilities, 'observe', 'act'])] } },
      });
    }
    return { monitor: id, token };
  }

  /** How to follow the runs with `vigil watch` (the token stays in the cache file). */
  watchHint(cacheFile: string): string | null {
    const watch = this.target?.watch;
    if (!watch) return null;
    return `follow with: vigil watch --base ${this.place.base} --subscription ${watch.subscription} --token <watch.token in ${cacheFile}>`;
  }

  /** Queues one observation; `actor` names who acted (a run, a step, a sentinel), else the publisher's own. */
  publish(type: string, subject: string, data: Record<string, unknown>, actor?: string): void {
    if (this.pending.length - this.keptAhead >= mostPending) {
      this.dropped++;
      return;
    }
    this.pending.push({ type, subject, data, actor: actor ?? this.actor });
    // In an outage the retry timer drains; once its wait is over (a timer that found nothing to send), this one does.
    if (!this.outage || Date.now() >= this.outage.retryAtMs) this.drain();
  }

  /**
   * Resolves once what was queued is published, or, while the server is away, after one more try of it
   * unless the last went unanswered (a run's end waits for its last observations at most one request's
   * limit); what is still pending then is said and given up.
   */
  async flush(): Promise<void> {
    await this.draining;
    if (this.outage && !this.outage.unanswered) {
      this.outage.retryAtMs = 0;
      await this.drain();
    }
    let kept = 0;
    try {
      if (this.keeps) kept = keepUnpublished(this.place.projectRoot, this.place.base, this.pending);
    } catch (error) {
      this.warn(`vigil: cannot keep what was not published in ${unpublishedFile(this.place.projectRoot)}: ${(error as Error).message}`);
    }
    const lost = this.pending.length - kept + this.dropped;
    if (kept > 0) {
      this.warn(
        `vigil: ${kept} ${kept === 1 ? 'observation was' : 'observations were'} not published: the server was away; kept in ${unpublishedFile(this.place.projectRoot)} for the next run or daemon of this project that reaches ${this.place.base}`,
      );
    }
    // Past the queue's 1,000 (dropped as they came), or past what the file of kept ones holds.
    if (lost > 0) this.warn(`vigil: ${lost} ${lost === 1 ? 'observation was' : 'observations were'} not published: the server was away${this.keeps ? ' and there was no room to keep them' : ''}`);
    this.pending.length = 0;
    this.keptAhead = 0;
    this.dropped = 0;
    this.releaseTaken?.();
    this.releaseTaken = undefined;
    clearTimeout(this.retry);
  }

  /** Publishes what is pending, in order, until it is all out or the server is away (then a timer tries again). */
  private drain(): Promise<void> {
    this.draining = this.draining.then(async () => {
      while (this.pending.length > 0) {
        const outage = this.outage;
        if (outage && Date.now() < outage.retryAtMs) return;
        try {
          await this.post(this.pending[0]!);
        } catch (error) {
          if (!refusedForGood(error)) {
            this.awayAfter(error, outage);
            return;
          }
          // The server answered and will not take this one (a bad field, a token it no longer knows): the rest go on.
          const said = (error as Error).message;
          if (!this.refusals.has(said)) this.warn(`vigil: the server refused an observation, which is not published: ${said}`);
          this.refusals.add(said);
        }
        this.pending.shift();
        if (this.keptAhead > 0) this.keptAhead--;
        if (outage) {
          this.outage = undefined;
          clearTimeout(this.retry);
          const lost = this.dropped > 0 ? `; ${this.dropped} more, which came while ${mostPending} were queued, were dropped` : '';
          this.dropped = 0;
          this.warn(`vigil: publishing to the server resumed after ${Math.round((Date.now() - outage.sinceMs) / 1000)} s; what was queued meanwhile is published${lost}`);
        }
      }
      // What this publisher took from earlier runs is out: a process killed now sends none of it again.
      this.releaseTaken?.();
      this.releaseTaken = undefined;
    });
    return this.draining;
  }

  /** A publish failed: the outage starts (said once) or its wait doubles; a timer drains again when it is over. */
  private awayAfter(error: unknown, outage: Outage | undefined): void {
    const waitMs = outage ? Math.min(mostRetryMs, outage.waitMs * 2) : firstRetryMs;
    const unanswered = error instanceof UnreachableError && error.timedOut;
    this.outage = { sinceMs: outage?.sinceMs ?? Date.now(), unanswered, waitMs, retryAtMs: Date.now() + waitMs };
    if (!outage) this.warn(`vigil: publishing to the server stopped: ${(error as Error).message}; what comes is queued (up to ${mostPending}) and published when it is back`);
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      if (this.outage) this.outage.retryAtMs = 0;
      void this.drain();
    }, waitMs);
    // A daemon or a run does not stay up for a retry.
    this.retry.unref();
  }

  /** Publishes one observation; a server that answers that the monitor is not there gets it made again, and the observation once more. */
  private async post(observation: Observation): Promise<void> {
    this.target ??= await openRunMonitor(this.place, this.warn);
    const target = this.target;
    const request = (to: CachedMonitor) =>
      this.place.client.request('POST', `/monitors/${to.id}/observations`, {
        token: to.owner_token,
        timeoutMs: answerWithinMs,
        body: { ...observation, ...onBehalfOfOwner(to.owner ?? null) },
      });
    try {
      await request(target);
    } catch (error) {
      if (!(error instanceof ServerError && error.status === 404)) throw error;
      this.target = await openRunMonitor(this.place, this.warn);
      this.warn(`vigil: the server no longer has monitor ${target.id} (restarted without its state?): publishing to ${this.target.id}, made again`);
      await request(this.target);
    }
  }
}

/** A refusal that trying again would not change: the server answered 4xx (but for 408 and 429, which ask to wait). */
function refusedForGood(error: unknown): boolean {
  return error instanceof ServerError && error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429;
}
