// A lease on one subject of one monitor: held, free, completed or
// dead-lettered, with an expiry timer while held. Pure: the time comes in on
// each event, and the expiry's side effect (recording it) is the action
// `announceExpiry`, supplied by the actor system.
import { and, assign, setup } from 'xstate';
import { isoTime } from '../protocol/wire-values.ts';
import type { LeaseRecord, LeaseState } from '../store/records.ts';

/**
 * `fence` on a claim is the grant's fencing token: the seq its `lease` observation takes, so it grows
 * with every claim of the subject (protocol.md §21). On the other events it is the token the caller
 * sent, if any: a token that is not the current grant's makes the event act on nothing. `queued` on a
 * claim is the seq through which take-next found the subject (protocol.md §21); the lease keeps it.
 */
export type LeaseEvent =
  | { type: 'CLAIM'; holder: string; durationSeconds: number; fence: number; now: number; queued?: number }
  | { type: 'RENEW'; holder: string; durationSeconds?: number; fence?: number; now: number }
  | { type: 'COMPLETE'; holder: string; outcome?: unknown; evidence?: unknown[]; fence?: number; seq: number; now: number }
  | { type: 'RELEASE'; holder: string; fence?: number; now: number }
  | { type: 'REJECT'; holder: string; fence?: number; now: number };

export type LeaseEffect =
  | 'claimed'
  | 'reclaimed'
  | 'renewed'
  | 'completed'
  | 'recompleted'
  | 'released'
  | 'rejected'
  | 'dead_lettered';

export type LeaseOutcome =
  | { ok: true; effect: LeaseEffect }
  | {
      ok: false;
      code: 'LEASE_HELD' | 'LEASE_LOST' | 'DEAD_LETTERED';
      holder: string | null;
      expiresMs: number | null;
      /** The current grant's fencing token (null when no grant holds the lease). */
      fence: number | null;
    };

export interface LeaseContext {
  lease: LeaseRecord;
  /** Time of the latest event (ms); the expiry delay is measured from it. */
  now: number;
  rejectLimit: number;
  outcome: LeaseOutcome | null;
  /** The state the lease was stored in; the machine starts there. */
  restoredAs: LeaseState;
}

export interface LeaseInput {
  state: LeaseState;
  lease: LeaseRecord;
  now: number;
  rejectLimit: number;
}

const refusal = (code: 'LEASE_HELD' | 'LEASE_LOST' | 'DEAD_LETTERED', context: LeaseContext, lapsed = false) => ({
  outcome: {
    ok: false as const,
    code,
    holder: lapsed ? null : context.lease.holder,
    expiresMs: lapsed ? null : context.lease.expiresMs,
    fence: lapsed || context.lease.holder === null ? null : (context.lease.fence ?? null),
  },
});

const heldBy = (lease: LeaseRecord, holder: string, now: number) =>
  lease.holder === holder && lease.expiresMs !== null && now < lease.expiresMs;
/** A caller that sent no token is judged by holder alone (base clients); one that sent a token, by it too. */
const sameGrant = (lease: LeaseRecord, fence: number | undefined) => fence === undefined || fence === lease.fence;
/**
 * `now` is whole milliseconds, cut down from the moment the request arrived, so it may read a
 * little before the client sent it. A grant lasts its duration from the next millisecond: never
 * ending before the claim's send time plus the duration, which is what a client can prove it held.
 */
const clockResolutionMs = 1;
const lapsedAt = (lease: LeaseRecord, now: number) => lease.expiresMs !== null && now >= lease.expiresMs;

/**
 * The refusal a CLAIM gets from the machine when it changes nothing: the
 * lease is held by another holder and has not lapsed, or it is dead-lettered.
 * Undefined when the claim must go to the actor. Most claims under contention
 * are refused, and deciding that here costs no actor transition.
 */
export function claimRefusal(state: LeaseState, lease: LeaseRecord, holder: string, now: number): Extract<LeaseOutcome, { ok: false }> | undefined {
  if (state === 'held' && !heldBy(lease, holder, now) && !lapsedAt(lease, now)) {
    return { ok: false, code: 'LEASE_HELD', holder: lease.holder, expiresMs: lease.expiresMs, fence: lease.fence ?? null };
  }
  if (state === 'dead_lettered') return { ok: false, code: 'DEAD_LETTERED', holder: lease.holder, expiresMs: lease.expiresMs, fence: null };
  return undefined;
}

/**
 * The lease a CLAIM leaves: the machine's `acquire`, and the grant of a lease that is only a row
 * (take-next on a subject no actor holds: service/lease-cold.ts), so both follow one rule.
 */
export function acquiredLease(lease: LeaseRecord, e: Extract<LeaseEvent, { type: 'CLAIM' }>): LeaseRecord {
  const time = isoTime(e.now);
  return {
    ...lease,
    holder: e.holder,
    lease_duration_seconds: e.durationSeconds,
    acquire_time: time,
    renew_time: time,
    expiresMs: e.now + clockResolutionMs + e.durationSeconds * 1000,
    attempts: lease.attempts + 1,
    lease_transitions: lease.lease_transitions + (lease.holder !== e.holder ? 1 : 0),
    fence: e.fence,
    queued: e.queued ?? lease.queued,
    completedBy: null,
    completedSeq: undefined,
    outcome: undefined,
    evidence: undefined,
  };
}

/** The lease a COMPLETE leaves (the machine's `complete`, and a lease that is only a row). */
export function completedLease(lease: LeaseRecord, e: Extract<LeaseEvent, { type: 'COMPLETE' }>): LeaseRecord {
  return { ...lease, holder: null, expiresMs: null, completedBy: e.holder, completedSeq: e.seq, outcome: e.outcome, evidence: e.evidence };
}

/**
 * The refusal a COMPLETE by `holder` (with the token it sent, if any) would get, decided without
 * sending it; undefined when the machine would complete (or repeat the completion). A list of
 * completions is checked whole this way before any of them is sent: all or nothing.
 */
export function completeRefusal(state: LeaseState, lease: LeaseRecord, holder: string, fence: number | undefined, now: number): Extract<LeaseOutcome, { ok: false }> | undefined {
  if (state === 'dead_lettered') return { ok: false, code: 'DEAD_LETTERED', holder: lease.holder, expiresMs: lease.expiresMs, fence: null };
  if (state === 'held' && heldBy(lease, holder, now) && sameGrant(lease, fence)) return undefined;
  if (state === 'completed' && lease.completedBy === holder && sameGrant(lease, fence)) return undefined;
  const lapsed = state !== 'held' || lapsedAt(lease, now) || lease.holder === null;
  return { ok: false, code: 'LEASE_LOST', holder: lapsed ? null : lease.holder, expiresMs: lapsed ? null : lease.expiresMs, fence: lapsed ? null : (lease.fence ?? null) };
}

export const leaseMachine = setup({
  types: {
    context: {} as LeaseContext,
    events: {} as LeaseEvent,
    input: {} as LeaseInput,
  },
  actions: {
    /** Records the expiry; supplied by the actor system. Runs before `expire` so the holder is still known. */
    announceExpiry: (_args, _params: { lease: LeaseRecord }) => {},
    expire: assign(({ context }) => ({
      lease: { ...context.lease, holder: null, expiresMs: null },
      outcome: null,
    })),
    acquire: assign(({ context, event }) => {
      const e = event as Extract<LeaseEvent, { type: 'CLAIM' }>;
      return { now: e.now, lease: acquiredLease(context.lease, e), outcome: { ok: true as const, effect: 'claimed' as const } };
    }),
    reclaimed: assign({ outcome: { ok: true as const, effect: 'reclaimed' as const } }),
    renew: assign(({ context, event }) => {
      const e = event as Extract<LeaseEvent, { type: 'RENEW' }>;
      const duration = e.durationSeconds ?? context.lease.lease_duration_seconds;
      return {
        now: e.now,
        lease: {
          ...context.lease,
          lease_duration_seconds: duration,
          renew_time: new Date(e.now).toISOString(),
          expiresMs: e.now + clockResolutionMs + duration * 1000,
        },
        outcome: { ok: true as const, effect: 'renewed' as const },
      };
    }),
    complete: assign(({ context, event }) => {
      const e = event as Extract<LeaseEvent, { type: 'COMPLETE' }>;
      return { now: e.now, lease: completedLease(context.lease, e), outcome: { ok: true as const, effect: 'completed' as const } };
    }),
    recompleted: assign({ outcome: { ok: true as const, effect: 'recompleted' as const } }),
    release: assign(({ context, event }) => ({
      now: event.now,
      lease: { ...context.lease, holder: null, expiresMs: null },
      outcome: { ok: true as const, effect: 'released' as const },
    })),
    reject: assign(({ context, event }) => ({
      now: event.now,
      lease: { ...context.lease, holder: null, expiresMs: null, rejects: context.lease.rejects + 1 },
      outcome: { ok: true as const, effect: 'rejected' as const },
    })),
    deadLetter: assign(({ context, event }) => ({
      now: event.now,
      lease: { ...context.lease, holder: null, expiresMs: null, rejects: context.lease.rejects + 1 },
      outcome: { ok: true as const, effect: 'dead_lettered' as const },
    })),
    refuseHeld: assign(({ context }) => refusal('LEASE_HELD', context)),
    refuseLost: assign(({ context, event }) =>
      refusal('LEASE_LOST', context, context.lease.expiresMs !== null && event.now >= context.lease.expiresMs),
    ),
    refuseDeadLettered: assign(({ context }) => refusal('DEAD_LETTERED', context)),
  },
  guards: {
    /** Whether this process runs the lease's timers (a cluster node that lost its monitor's ownership does not). */
    timersRunHere: () => true,
    storedAs: ({ context }, params: { state: LeaseState }) => context.restoredAs === params.state,
    heldByCaller: ({ context, event }) => heldBy(context.lease, event.holder, event.now) && sameGrant(context.lease, event.type === 'CLAIM' ? undefined : event.fence),
    lapsed: ({ context, event }) => lapsedAt(context.lease, event.now),
    completedByCaller: ({ context, event }) =>
      context.lease.completedBy === event.holder && sameGrant(context.lease, event.type === 'CLAIM' ? undefined : event.fence),
    lastReject: ({ context }) => context.lease.rejects + 1 >= context.rejectLimit,
    expiredAtRestore: ({ context }) =>
      context.restoredAs === 'held' && context.lease.expiresMs !== null && context.now >= context.lease.expiresMs,
  },
  delays: {
    untilExpiry: ({ context }) => Math.max(0, (context.lease.expiresMs ?? context.now) - context.now),
  },
}).createMachine({
  id: 'lease',
  context: ({ input }) => ({
    lease: input.lease,
    restoredAs: input.state,
    now: input.now,
    rejectLimit: input.rejectLimit,
    outcome: null,
  }),
  initial: 'restoring',
  states: {
    restoring: {
      always: [
        {
          // Expired while the server was down: expire now, recorded like any expiry.
          guard: 'expiredAtRestore',
          target: 'free',
          actions: [{ type: 'announceExpiry', params: ({ context }) => ({ lease: context.lease }) }, 'expire'],
        },
        { guard: { type: 'storedAs', params: { state: 'held' } }, target: 'held' },
        { guard: { type: 'storedAs', params: { state: 'completed' } }, target: 'completed' },
        { guard: { type: 'storedAs', params: { state: 'dead_lettered' } }, target: 'dead_lettered' },
        { target: 'free' },
      ],
    },
    free: {
      on: {
        CLAIM: { target: 'held', actions: 'acquire' },
        RENEW: { actions: 'refuseLost' },
        COMPLETE: { actions: 'refuseLost' },
        RELEASE: { actions: 'refuseLost' },
        REJECT: { actions: 'refuseLost' },
      },
    },
    held: {
      after: {
        untilExpiry: {
          guard: 'timersRunHere',
          target: 'free',
          actions: [{ type: 'announceExpiry', params: ({ context }) => ({ lease: context.lease }) }, 'expire'],
        },
      },
      on: {
        CLAIM: [
          { guard: 'heldByCaller', actions: 'reclaimed' },
          {
            guard: 'lapsed',
            target: 'held',
            reenter: true,
            actions: [{ type: 'announceExpiry', params: ({ context }) => ({ lease: context.lease }) }, 'expire', 'acquire'],
          },
          { actions: 'refuseHeld' },
        ],
        RENEW: [{ guard: 'heldByCaller', target: 'held', reenter: true, actions: 'renew' }, { actions: 'refuseLost' }],
        COMPLETE: [{ guard: 'heldByCaller', target: 'completed', actions: 'complete' }, { actions: 'refuseLost' }],
        RELEASE: [{ guard: 'heldByCaller', target: 'free', actions: 'release' }, { actions: 'refuseLost' }],
        REJECT: [
          { guard: and(['heldByCaller', 'lastReject']), target: 'dead_lettered', actions: 'deadLetter' },
          { guard: 'heldByCaller', target: 'free', actions: 'reject' },
          { actions: 'refuseLost' },
        ],
      },
    },
    completed: {
      on: {
        CLAIM: { target: 'held', actions: 'acquire' },
        COMPLETE: [{ guard: 'completedByCaller', actions: 'recompleted' }, { actions: 'refuseLost' }],
        RENEW: { actions: 'refuseLost' },
        RELEASE: { actions: 'refuseLost' },
        REJECT: { actions: 'refuseLost' },
      },
    },
    dead_lettered: {
      on: {
        CLAIM: { actions: 'refuseDeadLettered' },
        RENEW: { actions: 'refuseDeadLettered' },
        COMPLETE: { actions: 'refuseDeadLettered' },
        RELEASE: { actions: 'refuseDeadLettered' },
        REJECT: { actions: 'refuseDeadLettered' },
      },
    },
  },
});

/** The state a lease actor is in, as the protocol names it. */
export function leaseStateOf(value: unknown): LeaseState {
  return value === 'held' || value === 'completed' || value === 'dead_lettered' ? value : 'free';
}
