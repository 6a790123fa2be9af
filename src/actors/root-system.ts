// The root of the actor system: one registry per kind of actor (monitors,
// subscriptions, leases), the clock, and the deadline scheduler that wakes
// actors whose timers must fire while they are not resident. Machines get
// their side effects here, through `provide`.
import { type ActorRefFrom, type AnyActorRef, createActor, type InspectionEvent } from 'xstate';
import { leaseMachine } from '../machines/lease-machine.ts';
import { monitorMachine } from '../machines/monitor-machine.ts';
import type { SourceInput, sourceMachine } from '../machines/source-machine.ts';
import { subscriptionMachine } from '../machines/subscription-machine.ts';
import type {
  LeaseRecord,
  LeaseRow,
  MonitorDefinition,
  MonitorStatus,
  SubscriptionRecord,
  SubscriptionRow,
} from '../store/records.ts';
import type { Clock } from './clock.ts';
import { DeadlineScheduler } from './deadline-scheduler.ts';
import { ActorRegistry } from './registry.ts';

export type MonitorActor = ActorRefFrom<typeof monitorMachine>;
export type SubscriptionActor = ActorRefFrom<typeof subscriptionMachine>;
export type LeaseActor = ActorRefFrom<typeof leaseMachine>;
export type SourceActor = ActorRefFrom<typeof sourceMachine>;

/** What actors need from the outside world: reading their rows and recording their timer-driven transitions. */
export interface ActorEnvironment {
  readonly clock: Clock;
  readonly rejectLimit: number;
  loadSubscription(id: string): SubscriptionRow | undefined;
  loadLease(key: string): LeaseRow | undefined;
  /** A held lease ran out (called before the lease becomes free). */
  leaseExpired(lease: LeaseRecord): void;
  /** A live subscription went mute and was retired. */
  subscriptionMuted(subscription: SubscriptionRecord): void;
  actorFailed(kind: string, key: string, error: unknown): void;
  /** Receives every actor's inspection events (vigil serve --inspect). */
  readonly inspect?: (event: InspectionEvent) => void;
  /**
   * A cluster node runs the timers of the monitors it owns only (protocol.md §20); elsewhere
   * an actor's timer is parked, and the owner wakes the actor through the deadline scheduler.
   */
  readonly timersRunHere?: (mkey: number) => boolean;
}

/** The longest timer a clock accepts: a parked timer never fires in practice. */
const parkedMs = 2 ** 31 - 1;

type DelayOf<Context> = (args: { context: Context }) => number;

export const leaseKey = (mkey: number, subject: string) => `${mkey}:${subject}`;

/** How many subscription and lease actors stay in memory; the rest live as rows (about 5 KB per actor saved). */
export const defaultResidentCap = 5_000;

export class RootSystem {
  readonly monitors: ActorRegistry<MonitorActor>;
  readonly subscriptions: ActorRegistry<SubscriptionActor>;
  readonly leases: ActorRegistry<LeaseActor>;
  /** Live sources (§18), one per monitor that watches something; started by src/sources. */
  readonly sources: ActorRegistry<SourceActor>;
  readonly deadlines: DeadlineScheduler;
  private readonly leaseLogic;
  private readonly subscriptionLogic;

  constructor(
    private readonly env: ActorEnvironment,
    private readonly residentCap = defaultResidentCap,
  ) {
    const here = env.timersRunHere;
    const untilExpiry = leaseMachine.implementations.delays.untilExpiry as DelayOf<{ lease: LeaseRecord }>;
    // Armed for its deadline on the system's clock, not from the time of the last event: a mute timer
    // that fired late and is armed again for the rest of a period (subscription-machine.ts) carries no delay.
    const untilMute: DelayOf<{ subscription: SubscriptionRecord }> = ({ context }) =>
      Math.max(0, context.subscription.lastActivityMs + context.subscription.muteMs - env.clock.now());
    this.leaseLogic = leaseMachine.provide({
      actions: { announceExpiry: (_args, params) => env.leaseExpired(params.lease) },
      // A timer armed while this node owned the monitor does not fire once it lost it.
      ...(here && {
        delays: { untilExpiry: (args) => (here(args.context.lease.mkey) ? untilExpiry(args) : parkedMs) },
        guards: { timersRunHere: ({ context }) => here(context.lease.mkey) },
      }),
    });
    this.subscriptionLogic = subscriptionMachine.provide({
      actions: { announceMuted: (_args, params) => env.subscriptionMuted(params.subscription) },
      delays: { untilMute: here ? (args) => (here(args.context.subscription.mkey) ? untilMute(args) : parkedMs) : untilMute },
      ...(here && { guards: { timersRunHere: ({ context }) => here(context.subscription.mkey) } }),
    });
    const failed = (kind: string, key: string, error: unknown) => env.actorFailed(kind, key, error);
    // Monitors are few and always resident; they are added when loaded or created.
    this.monitors = new ActorRegistry<MonitorActor>('monitor', () => undefined, failed);
    this.subscriptions = new ActorRegistry<SubscriptionActor>(
      'subscription',
      (id) => {
        const row = env.loadSubscription(id);
        return row ? this.startSubscription(row) : undefined;
      },
      failed,
    );
    this.leases = new ActorRegistry<LeaseActor>(
      'lease',
      (key) => {
        const row = env.loadLease(key);
        return row ? this.startLease(row) : undefined;
      },
      failed,
    );
    this.sources = new ActorRegistry<SourceActor>('source', () => undefined, failed);
    this.deadlines = new DeadlineScheduler(env.clock, (key) => {
      const [kind, id] = [key.slice(0, 2), key.slice(2)];
      if (kind === 's:') this.subscriptions.get(id);
      else if (kind === 'l:') this.leases.get(id);
    });
  }

  get clock(): Clock {
    return this.env.clock;
  }

  addMonitor(status: MonitorStatus, definition: MonitorDefinition): MonitorActor {
    const actor = createActor(monitorMachine, { id: `monitor:${definition.id}`, input: { status, definition }, clock: this.env.clock, inspect: this.env.inspect });
    return this.monitors.add(definition.id, actor.start());
  }

  /** Starts a source actor from its kind's logic (the source machine with its watcher provided). */
  addSource(monitor: string, logic: typeof sourceMachine, input: SourceInput): SourceActor {
    this.sources.evict(monitor);
    return this.sources.add(monitor, createActor(logic, { id: `source:${monitor}`, input, clock: this.env.clock, inspect: this.env.inspect }).start());
  }

  /** Every resident actor by kind, for the dashboard. */
  *residents(): Generator<[kind: string, key: string, actor: AnyActorRef]> {
    for (const registry of [this.monitors, this.subscriptions, this.leases, this.sources] as ActorRegistry<AnyActorRef>[]) {
      for (const [key, actor] of registry.entries()) yield [registry.kind, key, actor];
    }
  }

  addSubscription(row: SubscriptionRow): SubscriptionActor {
    return this.subscriptions.add(row.record.id, this.startSubscription(row));
  }

  /**
   * A new subscription becomes a resident actor only while there is room;
   * otherwise it stays a row with its deadline in the scheduler until first
   * used, so that creating many subscriptions does not build actors that
   * the next trim would stop again. Returns false when it was left as a row.
   */
  admitSubscription(row: SubscriptionRow): boolean {
    if (this.subscriptions.size < this.residentCap) {
      this.addSubscription(row);
      return true;
    }
    this.wakeSubscriptionAt(row.record.id, row.record.lastActivityMs + row.record.muteMs);
    return false;
  }

  addLease(row: LeaseRow): LeaseActor {
    return this.leases.add(leaseKey(row.record.mkey, row.record.subject), this.startLease(row));
  }

  /** Deadlines of actors that are stored but not resident (e.g. after a restart). */
  wakeSubscriptionAt(id: string, dueMs: number): void {
    this.deadlines.at(`s:${id}`, dueMs);
  }

  wakeLeaseAt(key: string, dueMs: number): void {
    this.deadlines.at(`l:${key}`, dueMs);
  }

  /** A lease that is only a row ended before its deadline: nothing needs waking. */
  forgetLeaseDeadline(key: string): void {
    this.deadlines.cancel(`l:${key}`);
  }

  /**
   * Lets cold actors go; their deadlines move to the scheduler. Called right
   * after a commit, when no write of any actor is pending.
   */
  trim(): void {
    this.subscriptions.evictBeyond(this.residentCap, (id, actor) => {
      const snapshot = actor.getSnapshot();
      if (snapshot.value !== 'live') return;
      const s = snapshot.context.subscription;
      this.wakeSubscriptionAt(id, s.lastActivityMs + s.muteMs);
    });
    this.leases.evictBeyond(this.residentCap, (key, actor) => {
      const snapshot = actor.getSnapshot();
      const expires = snapshot.context.lease.expiresMs;
      if (snapshot.value === 'held' && expires !== null) this.wakeLeaseAt(key, expires);
    });
  }

  stop(): void {
    this.deadlines.stop();
    this.sources.stopAll();
    this.leases.stopAll();
    this.subscriptions.stopAll();
    this.monitors.stopAll();
  }

  private startSubscription(row: SubscriptionRow): SubscriptionActor {
    return createActor(this.subscriptionLogic, {
      id: `subscription:${row.record.id}`,
      input: { state: row.state, subscription: row.record, now: this.env.clock.now() },
      clock: this.env.clock,
      inspect: this.env.inspect,
    }).start();
  }

  private startLease(row: LeaseRow): LeaseActor {
    return createActor(this.leaseLogic, {
      id: `lease:${row.record.monitor}:${row.record.subject}`,
      input: { state: row.state, lease: row.record, now: this.env.clock.now(), rejectLimit: this.env.rejectLimit },
      clock: this.env.clock,
      inspect: this.env.inspect,
    }).start();
  }
}
