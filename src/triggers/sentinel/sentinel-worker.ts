// One sentinel instance of one recipe: a durable subscription
// (`sentinel:<name>:<instance>`, observe + act) pulled in order, a queue of
// pending observations per subject, up to `concurrency` subjects reacting at
// once, and an ack that never passes an observation still pending — so a
// restart resumes exactly where the work stood.
import { serverOnlyTypes } from '../../protocol/vocabulary.ts';
import { resolveSecret, systemVault } from '../../vault/vault-reader.ts';
import { SENTINEL_DEFAULTS } from '../../recipes/types/sentinel/index.ts';
import type { SentinelRecipe } from '../../recipes/types.ts';
import type { TemporalContext } from '../temporal/fire-temporal.ts';
import { admit } from '../temporal/schedule.ts';
import { RUN_TYPE } from '../../recipes/publish/run-monitor.ts';
import { ServerPublisher } from '../../recipes/publish/server-publisher.ts';
import { DoneLog } from './done-log.ts';
import { codeOf, ProtocolClient, type Observation, type SubscriptionRef } from '../../server-client/protocol-client.ts';
import { reactTurn } from './react.ts';
import { adviceFor, backoffMs, isLastingRefusal, maxBackoffMs } from './refusal-advice.ts';
import { UnreachableError } from '../../server-client/server-client.ts';
import { sleep } from '../../timing/sleep.ts';

/** watch.monitor naming this project's run monitor (docs/triggers.md). */
export const PROJECT_RUNS = '@runs';

/** The sentinel a run's `trigger` names (`sentinel:<name>:<seq>`), if any. */
const sentinelOf = (trigger: unknown): string | null => (typeof trigger === 'string' ? (/^sentinel:(.+):\d+$/.exec(trigger)?.[1] ?? null) : null);

/** What makes two failures the same problem: a server away is one, whether the connection was cut or refused. */
const problemOf = (error: unknown): string => (error instanceof UnreachableError ? 'unreachable' : (error as Error).message);

const MAX_PENDING = 500;

export class SentinelWorker {
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly queues = new Map<string, Observation[]>();
  private readonly active = new Map<string, Promise<void>>();
  private readonly retryAt = new Map<string, number>();
  private readonly arrived = new Map<string, number>();
  private readCursor = 0;
  private acked = 0;
  private ackChain: Promise<void> = Promise.resolve();
  private sub: SubscriptionRef | null = null;
  private doneLog: DoneLog | null = null;
  private retryTimer: unknown;
  /** The last failure of a reaction's turn that was logged: a server away fails every subject's turn every second. */
  private turnProblem = '';
  private readonly client: ProtocolClient;
  private readonly loop: Promise<void>;

  constructor(
    private readonly ctx: TemporalContext,
    private readonly recipe: SentinelRecipe,
    private readonly file: string,
    private readonly server: { base: string; token?: string } | undefined,
    /** Whether the daemon's sentinel of that name watches `@runs`: the runs its reactions start are not reacted to on `@runs`. */
    private readonly watchesRuns: (sentinel: string) => boolean = () => false,
  ) {
    this.client = new ProtocolClient(recipe.watch.base ?? server?.base ?? SENTINEL_DEFAULTS.base);
    this.loop = this.run();
  }

  private get name(): string {
    return this.recipe.name;
  }

  private async subscribe(kind: 'watch' | 'done'): Promise<SubscriptionRef> {
    const { store } = this.ctx;
    const { monitor, token } = await this.watched();
    const stored = store.subscription(this.name, kind);
    const same = stored && stored.base === this.client.base && stored.monitor === monitor;
    const bearers = [...(same ? [stored.token] : []), ...(token ? [token] : [])];
    if (bearers.length === 0) throw new Error(`${this.file}: watch.token is not set (nor server.token in vigil.yml); the sentinel needs a bearer to subscribe`);
    const subscriber = `sentinel:${this.name}:${store.instanceId()}${kind === 'done' ? ':done' : ''}`;
    const ref = await this.client.subscribe(bearers, {
      monitor,
      subscriber,
      capabilities: kind === 'watch' ? ['observe', 'act'] : ['observe'],
      ...(kind === 'watch' ? { filter: this.serverFilter() } : { filter: DoneLog.filter }),
      from: kind === 'watch' ? 'head' : 'earliest',
      // A cursor left below the retention floor (compaction, ttl) moves to the floor rather than
      // refusing every pull: the base protocol's default is now `none`, which would stall the sentinel.
      reset_policy: 'earliest',
    });
    store.saveSubscription({ recipe: this.name, kind, base: this.client.base, monitor, subscription: ref.id, token: ref.token });
    return ref;
  }

  /** The monitor to watch and the bearer to subscribe with: `@runs` is this project's run monitor, with its owner token. */
  private async watched(): Promise<{ monitor: string; token: string | undefined }> {
    const { monitor } = this.recipe.watch;
    if (monitor !== PROJECT_RUNS) return { monitor, token: resolveSecret(this.recipe.watch.token ?? this.server?.token, systemVault, `${this.file}: watch.token`) };
    const publisher = await ServerPublisher.connect({ ...this.server, base: this.client.base }, this.ctx.projectRoot, this.ctx.log, `agent:sentinel/${this.name}`);
    if (!publisher) throw new Error(`${this.file}: watch.monitor "@runs": this project's run monitor on ${this.client.base} cannot be reached or made`);
    return publisher.ownMonitor();
  }

  /**
   * The recipe's filter without `types`: a monitor refuses a type it has not received yet, and a
   * sentinel is usually set up before the first observation it waits for. Types are matched here.
   */
  private serverFilter(): Record<string, unknown> {
    const { types: _types, ...rest } = this.recipe.watch.filter ?? {};
    return rest;
  }

  private typeMatches(type: string): boolean {
    const wanted = this.recipe.watch.filter?.types;
    if (wanted === undefined) return true;
    const list = (Array.isArray(wanted) ? wanted : [wanted]).map(String);
    return list.some((t) => (t.endsWith('*') ? type.startsWith(t.slice(0, -1)) : type === t));
  }

  private async run(): Promise<void> {
    let lastProblem = '';
    let problemSince = 0;
    let refusals = 0;
    while (!this.stopped) {
      try {
        if (!this.sub) {
          this.sub = await this.subscribe('watch');
          this.doneLog = new DoneLog(this.client, await this.subscribe('done'), this.name);
          this.readCursor = this.sub.cursor;
          this.acked = this.sub.cursor;
          this.queues.clear();
          this.ctx.log(`sentinel ${this.name}: subscribed to ${this.recipe.watch.monitor} as ${this.sub.id} (cursor ${this.sub.cursor})`);
        }
        if (this.pendingCount() >= MAX_PENDING) {
          await sleep(200, this.abort.signal);
          continue;
        }
        const page = await this.client.pull(this.sub, { cursor: this.readCursor, wait: 5, limit: 100, signal: this.abort.signal });
        // The problem is over only once a pull got through: a subscribe can succeed and the pull after it fail.
        if (lastProblem !== '') {
          this.ctx.log(`sentinel ${this.name}: watching ${this.recipe.watch.monitor} again after ${Math.round((this.ctx.clock.now() - problemSince) / 1000)} s`);
          lastProblem = '';
          refusals = 0;
        }
        for (const o of page.observations) this.enqueue(o);
        this.readCursor = Math.max(this.readCursor, page.next);
        this.schedule();
        await this.maybeAck();
      } catch (error) {
        if (this.stopped) break;
        const code = codeOf(error);
        const lastingRefusal = isLastingRefusal(error);
        refusals = lastingRefusal ? refusals + 1 : 0;
        const waitMs = lastingRefusal ? backoffMs(refusals) : 1000;
        // Said once per distinct problem, not once per retry; the wait is said as it grows.
        const problem = problemOf(error);
        if (problem !== lastProblem) {
          const advice = lastingRefusal ? ` — ${adviceFor(error, this.recipe.watch.monitor, this.file)}` : '';
          this.ctx.log(`sentinel ${this.name}: ${(error as Error).message}${advice}; ${lastingRefusal ? `retrying after 1 s, then twice as long each time up to ${maxBackoffMs / 1000} s` : 'retrying every second'}`);
        } else if (lastingRefusal && waitMs === maxBackoffMs && backoffMs(refusals - 1) < maxBackoffMs) {
          this.ctx.log(`sentinel ${this.name}: still refused (${code}); retrying every ${maxBackoffMs / 1000} s`);
        }
        if (lastProblem === '') problemSince = this.ctx.clock.now();
        lastProblem = problem;
        if (code === 'NOT_FOUND' || code === 'UNAUTHORIZED' || code === 'CURSOR_EXPIRED') this.sub = null;
        await sleep(waitMs, this.abort.signal);
      }
    }
  }

  private pendingCount(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /**
   * On `@runs`, a sentinel reacts to runs that ended, never to its own: its reactions are runs of
   * this project too (the daemon publishes each as a run of the sentinel, and a recipe target's run
   * publishes itself), and reacting to them would feed on itself, a reaction a second for as long
   * as the daemon ran. Nor to any run a reaction of a sentinel on `@runs` started (its trigger names
   * that sentinel: the target's run, its children, a run a command target started): two such
   * sentinels, or one whose target is a composite, would feed one reaction on another without end.
   */
  private isEndedForeignRun(o: Observation): boolean {
    const data = (o.data ?? {}) as { recipe?: unknown; status?: unknown; type?: unknown; trigger?: unknown };
    if (o.type !== RUN_TYPE || data.status === 'running' || data.status === 'pending') return false;
    if (data.type === 'sentinel' && data.recipe === this.recipe.name) return false;
    const startedBy = sentinelOf(data.trigger);
    if (startedBy !== null && (startedBy === this.recipe.name || this.watchesRuns(startedBy))) return false;
    return !(this.recipe.mode !== 'command' && this.recipe.mode !== 'script' && data.recipe === this.recipe.target);
  }

  private enqueue(o: Observation): void {
    // The server's own bookkeeping (leases, subscriptions, …): reacting to it would feed on the sentinel's own leases.
    if (serverOnlyTypes.has(o.type) || !this.typeMatches(o.type)) return;
    if (this.recipe.watch.monitor === PROJECT_RUNS && !this.isEndedForeignRun(o)) return;
    if (o.subject === null || o.subject === undefined) {
      this.ctx.log(`sentinel ${this.name}: observation ${o.id} has no subject; a sentinel leases subjects, so it is not acted on`);
      return;
    }
    const q = this.queues.get(o.subject) ?? [];
    if (q.some((x) => x.id === o.id)) return;
    q.push(o);
    this.queues.set(o.subject, q);
    this.arrived.set(o.subject, this.ctx.clock.now());
  }

  private schedule(): void {
    if (this.stopped || !this.sub || !this.doneLog) return;
    this.ctx.clock.clearTimeout(this.retryTimer);
    const now = this.ctx.clock.now();
    const concurrency = this.recipe.concurrency ?? SENTINEL_DEFAULTS.concurrency;
    const debounceMs = (this.recipe.debounce ?? SENTINEL_DEFAULTS.debounce) * 1000;
    let wakeAt = Number.POSITIVE_INFINITY;
    const paused = admit({ ...this.recipe, type: 'temporal', schedule: '* * * * *' }, this.ctx.store.temporal(`sentinel:${this.name}`), now, false);
    for (const [subject, queue] of this.queues) {
      if (queue.length === 0) {
        // With its queue goes what was kept about the subject: a sentinel sees new subjects for as long as it
        // runs (one per build, per job), and each left two entries behind.
        this.queues.delete(subject);
        this.arrived.delete(subject);
        if (!this.active.has(subject)) this.retryAt.delete(subject);
        continue;
      }
      if (this.active.has(subject)) continue;
      const ready = Math.max(this.retryAt.get(subject) ?? 0, debounceMs > 0 ? (this.arrived.get(subject) ?? 0) + debounceMs : 0);
      if (paused || ready > now || this.active.size >= concurrency) {
        wakeAt = Math.min(wakeAt, paused || this.active.size >= concurrency ? now + 500 : ready);
        continue;
      }
      this.active.set(subject, this.turn(subject, queue, debounceMs > 0));
    }
    if (wakeAt !== Number.POSITIVE_INFINITY) this.retryTimer = this.ctx.clock.setTimeout(() => this.schedule(), Math.max(10, wakeAt - now));
  }

  private async turn(subject: string, queue: Observation[], debounce: boolean): Promise<void> {
    try {
      const result = await reactTurn({ ctx: this.ctx, recipe: this.recipe, file: this.file, client: this.client, sub: this.sub!, doneLog: this.doneLog!, subject, queue, debounce });
      // Held by another, or taken over while it ran (fenced): the holder completes it, and the done log then drops it.
      if (result === 'held' || result === 'fenced') this.retryAt.set(subject, this.ctx.clock.now() + 200);
      else if (result === 'failed') this.retryAt.set(subject, this.ctx.clock.now() + 1000);
      else if (result === 'dead_lettered') {
        this.ctx.log(`sentinel ${this.name}: subject "${subject}" is dead-lettered; ${queue.length} observation(s) of it are dropped`);
        for (const o of queue) this.doneLog!.add(Number(o.id));
        queue.length = 0;
      } else this.retryAt.delete(subject);
      this.turnProblem = '';
    } catch (error) {
      // Said once while it lasts (every subject's turn meets it, every second): the watch loop says when the server answers again.
      const problem = problemOf(error);
      if (!this.stopped && problem !== this.turnProblem) this.ctx.log(`sentinel ${this.name}: subject "${subject}": ${(error as Error).message}; retrying every second`);
      this.turnProblem = problem;
      this.retryAt.set(subject, this.ctx.clock.now() + 1000);
    } finally {
      this.active.delete(subject);
      if (!this.stopped) {
        await this.maybeAck().catch((error: Error) => this.ctx.log(`sentinel ${this.name}: ack failed: ${error.message}`));
        this.schedule();
      }
    }
  }

  /** Acknowledges up to the oldest observation still pending. */
  private maybeAck(): Promise<void> {
    this.ackChain = this.ackChain.then(() => this.ackNow());
    return this.ackChain;
  }

  private async ackNow(): Promise<void> {
    if (!this.sub) return;
    let target = this.readCursor;
    for (const q of this.queues.values()) for (const o of q) target = Math.min(target, Number(o.id));
    if (target <= this.acked) return;
    const sub = this.sub;
    this.acked = target;
    await this.client.ack(sub, target);
    this.doneLog?.prune(target);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.ctx.clock.clearTimeout(this.retryTimer);
    await this.loop;
    await Promise.all(this.active.values());
  }
}
