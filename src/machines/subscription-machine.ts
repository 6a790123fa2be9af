// A subscription: live or retired. While live a mute timer runs; every pull,
// stream, ack or seek moves its deadline, and when it runs out the
// subscription is retired and `announceMuted` (supplied by the actor system)
// records it. Activity only ever moves the deadline later, so it does not
// reschedule the timer: the timer fires at the deadline it was armed for and
// is armed again for the rest when activity came meanwhile. (Rescheduling on
// every pull cost about as much CPU as the rest of the event, and grew each
// active actor by 100–130 bytes: two objects of its system's timer tables
// turned into dictionaries.)
import { and, assign, setup } from 'xstate';
import type { SubscriptionRecord, SubscriptionState } from '../store/records.ts';

export type SubscriptionEvent =
  | { type: 'ACTIVITY'; now: number; shownUpTo?: number }
  | { type: 'ACK'; cursor: number; head: number; now: number }
  | { type: 'SEEK'; cursor: number; head: number; now: number }
  | { type: 'RENEW'; tokenHash: string; now: number }
  | { type: 'REKEY'; tokenHash: string; now: number; settings: SubscriptionSettings }
  | { type: 'RETIRE'; now: number };

export type SubscriptionOutcome =
  | { ok: true; changed: boolean }
  | { ok: false; code: 'CURSOR_BACKWARDS' | 'INVALID' | 'UNAVAILABLE'; cursor: number };

/** What a new subscribe request for the same subscriber may change. */
export type SubscriptionSettings = Partial<
  Pick<SubscriptionRecord, 'capabilities' | 'filter' | 'protocol' | 'reset_policy' | 'retire_after_mute_seconds' | 'muteMs'>
>;

export interface SubscriptionContext {
  subscription: SubscriptionRecord;
  now: number;
  /** The mute deadline the running timer was armed for (ms). */
  muteDueMs: number;
  outcome: SubscriptionOutcome | null;
  restoredAs: SubscriptionState;
}

export interface SubscriptionInput {
  state: SubscriptionState;
  subscription: SubscriptionRecord;
  now: number;
}

const ok = (changed: boolean) => ({ ok: true as const, changed });

/**
 * The record after a pull or a stream showed seqs up to `shownUpTo` at `now`. Also
 * applied to a subscription that is only a row (an open stream's periodic activity).
 */
export function touchedSubscription(subscription: SubscriptionRecord, now: number, shownUpTo = 0): SubscriptionRecord {
  return {
    ...subscription,
    lastActivityMs: now,
    last_pull: new Date(now).toISOString(),
    maxShown: Math.max(subscription.maxShown, shownUpTo),
  };
}

export const subscriptionMachine = setup({
  types: {
    context: {} as SubscriptionContext,
    events: {} as SubscriptionEvent,
    input: {} as SubscriptionInput,
  },
  actions: {
    /** Records the retirement for muteness; supplied by the actor system. */
    announceMuted: (_args, _params: { subscription: SubscriptionRecord }) => {},
    touch: assign(({ context, event }) => {
      const e = event as Extract<SubscriptionEvent, { type: 'ACTIVITY' }>;
      return { now: e.now, subscription: touchedSubscription(context.subscription, e.now, e.shownUpTo), outcome: ok(true) };
    }),
    commitCursor: assign(({ context, event }) => {
      const e = event as Extract<SubscriptionEvent, { type: 'ACK' | 'SEEK' }>;
      return {
        now: e.now,
        subscription: { ...context.subscription, cursor: e.cursor, lastActivityMs: e.now },
        outcome: ok(e.cursor !== context.subscription.cursor),
      };
    }),
    refuseBackwards: assign(({ context }) => ({
      outcome: { ok: false as const, code: 'CURSOR_BACKWARDS' as const, cursor: context.subscription.cursor },
    })),
    refuseBeyondHead: assign(({ context }) => ({
      outcome: { ok: false as const, code: 'INVALID' as const, cursor: context.subscription.cursor },
    })),
    refuseRetired: assign(({ context }) => ({
      outcome: { ok: false as const, code: 'UNAVAILABLE' as const, cursor: context.subscription.cursor },
    })),
    setToken: assign(({ context, event }) => {
      const e = event as Extract<SubscriptionEvent, { type: 'RENEW' | 'REKEY' }>;
      const settings = e.type === 'REKEY' ? e.settings : {};
      return {
        now: e.now,
        subscription: { ...context.subscription, ...settings, tokenHash: e.tokenHash, lastActivityMs: e.now },
        outcome: ok(true),
      };
    }),
    retire: assign(({ event }) => ({ now: event.now, outcome: ok(true) })),
    armMute: assign(({ context }) => ({ muteDueMs: context.subscription.lastActivityMs + context.subscription.muteMs })),
    /** The timer fired at the deadline it was armed for: that is the time now. */
    reachedDue: assign(({ context }) => ({ now: context.muteDueMs })),
  },
  guards: {
    /** Whether this process runs the subscription's timers (a cluster node that lost its monitor's ownership does not). */
    timersRunHere: () => true,
    storedLive: ({ context }) => context.restoredAs === 'live',
    muteElapsed: ({ context }) =>
      context.now >= context.subscription.lastActivityMs + context.subscription.muteMs,
    /** No activity moved the deadline since the timer was armed. */
    mutedAtDue: ({ context }) => context.subscription.lastActivityMs + context.subscription.muteMs <= context.muteDueMs,
    backwards: ({ context, event }) =>
      event.type === 'ACK' && event.cursor < context.subscription.cursor,
    beyondHead: ({ event }) => (event.type === 'ACK' || event.type === 'SEEK') && event.cursor > event.head + 1,
  },
  delays: {
    untilMute: ({ context }) =>
      Math.max(0, context.subscription.lastActivityMs + context.subscription.muteMs - context.now),
  },
}).createMachine({
  id: 'subscription',
  context: ({ input }) => ({
    subscription: input.subscription,
    now: input.now,
    muteDueMs: input.subscription.lastActivityMs + input.subscription.muteMs,
    outcome: null,
    restoredAs: input.state,
  }),
  initial: 'restoring',
  states: {
    restoring: {
      always: [
        {
          // Went mute while the server was down: retire now, recorded like any mute retirement.
          guard: and(['storedLive', 'muteElapsed']),
          target: 'retired',
          actions: { type: 'announceMuted', params: ({ context }) => ({ subscription: context.subscription }) },
        },
        { guard: 'storedLive', target: 'live' },
        { target: 'retired' },
      ],
    },
    live: {
      entry: 'armMute',
      after: {
        untilMute: [
          {
            guard: and(['timersRunHere', 'mutedAtDue']),
            target: 'retired',
            actions: [{ type: 'reachedDue' }, { type: 'announceMuted', params: ({ context }) => ({ subscription: context.subscription }) }],
          },
          // Activity came since the timer was armed: armed again for the rest.
          { guard: 'timersRunHere', target: 'live', reenter: true, actions: 'reachedDue' },
        ],
      },
      on: {
        ACTIVITY: { actions: 'touch' },
        ACK: [{ guard: 'backwards', actions: 'refuseBackwards' }, { guard: 'beyondHead', actions: 'refuseBeyondHead' }, { actions: 'commitCursor' }],
        SEEK: [{ guard: 'beyondHead', actions: 'refuseBeyondHead' }, { actions: 'commitCursor' }],
        // A new mute period may be shorter: the timer is armed again.
        RENEW: { target: 'live', reenter: true, actions: 'setToken' },
        REKEY: { target: 'live', reenter: true, actions: 'setToken' },
        RETIRE: { target: 'retired', actions: 'retire' },
      },
    },
    retired: {
      on: {
        REKEY: { target: 'live', actions: 'setToken' },
        RETIRE: { actions: assign({ outcome: ok(false) }) },
        ACTIVITY: { actions: 'refuseRetired' },
        ACK: { actions: 'refuseRetired' },
        SEEK: { actions: 'refuseRetired' },
        RENEW: { actions: 'refuseRetired' },
      },
    },
  },
});

export function subscriptionStateOf(value: unknown): SubscriptionState {
  return value === 'live' ? 'live' : 'retired';
}
