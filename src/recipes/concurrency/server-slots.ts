// The slots of a cap shared through a Vigil server (vigil.yml `server:`): the
// slots of pool P are the subjects `slot-1` … `slot-64` of the public monitor
// `vigil.concurrency.P`, and a step holds slot k by holding the lease on
// `slot-k` (protocol.md §12, §21): claimed before its agent starts, renewed
// with its fence while the agent runs, completed when it ends. A runner killed
// with -9 stops renewing, so its slots are free once their leases expire
// (`concurrency_lease_seconds`). Every runner subscribes to the monitor once
// per pool; each claim and renewal carries a note naming the run and step, so
// a waiting step can say who holds the slots. The monitor and this runner's
// subscription to it are slot-pool.ts's.
import { answerWithinMs, type ServerClient, serverClient, UnreachableError } from '../../server-client/server-client.ts';
import { LeaseFence } from '../../server-client/lease-fence.ts';
import { systemClock } from '../../actors/clock.ts';
import { orAborted } from '../../timing/or-aborted.ts';
import { holderText, type SlotHolder, type SlotStore, type SlotWaiter, type TakeResult } from './slot-store.ts';
import { sleep } from '../../timing/sleep.ts';
import { codeOf, type PoolState, SlotPoolMonitors, UNPUBLISHED_GRACE_S } from './slot-pool.ts';

const PULL_WAIT_S = 5;
/** How long a runner that has not reached the slots' server yet waits for it before failing the step. */
const FIRST_REACH_MS = answerWithinMs;

export class ServerSlots implements SlotStore {
  readonly where: string;
  private readonly http: ServerClient;
  private readonly monitors: SlotPoolMonitors;
  private readonly pools = new Map<string, Promise<PoolState>>();
  private readonly leases = new Set<LeaseFence>();
  /** Aborted when the runner closes the store: completions tried again in the background stop. */
  private readonly closing = new AbortController();

  constructor(
    server: { base: string; token?: string },
    private readonly leaseSeconds: number,
    private readonly warn: (line: string) => void,
    env: NodeJS.ProcessEnv = process.env,
    unpublishedGraceS = UNPUBLISHED_GRACE_S,
  ) {
    this.http = serverClient(server.base);
    this.monitors = new SlotPoolMonitors(this.http, server.token, warn, env, unpublishedGraceS);
    this.where = `leases on ${this.http.base}`;
  }

  private pool(pool: string, generation: number): Promise<PoolState> {
    let state = this.pools.get(pool);
    if (!state) {
      state = this.monitors.open(pool, generation);
      state.catch(() => this.pools.delete(pool));
      this.pools.set(pool, state);
    }
    return state;
  }

  async enter(pool: string, cap: number, who: SlotHolder, signal: AbortSignal): Promise<SlotWaiter> {
    /** Null until the pool is opened: a server away then is waited for, up to FIRST_REACH_MS. */
    let state: PoolState | null = null;
    let awaySince: number | null = null;
    const note = holderText(who);
    return {
      // A server away (restarted, redeployed, partitioned) is waited out as the holders are: a step
      // that waits for its slot is not failed by the moment the server was down. Before the pool was
      // ever opened only for a while: a `server:` that never answers fails the step.
      tryTake: async () => {
        try {
          for (;;) {
            if (!state || state.gone) state = await this.opened(pool, signal, state ?? undefined);
            const taken = await this.tryTake(state, cap, note, signal);
            if (!state.passedOver) return taken;
          }
        } catch (error) {
          if (!(error instanceof UnreachableError) || signal.aborted) throw error;
          if (!state) {
            awaySince ??= Date.now();
            // One that took the connection and never answered has had its 30 s already.
            if (error.timedOut || Date.now() - awaySince >= FIRST_REACH_MS) throw error;
          }
          return { holders: [], unavailable: `${error.message}; asking again every second` };
        }
      },
      changed: async (signal) => {
        if (!state) {
          await sleep(1000, signal);
          return;
        }
        if (state.gone) return;
        const opened = state;
        // A failed read (the server away a moment) is tried again after a second, or at once on the cancel.
        await this.monitors.read(opened, PULL_WAIT_S, signal).catch(async (error: Error) => {
          if (error.name === 'AbortError') return;
          if (codeOf(error) === 'NOT_FOUND') {
            opened.gone = true;
            return;
          }
          await sleep(1000, signal);
        });
      },
      leave: async () => {},
    };
  }

  /**
   * The pool as this runner opened it; opened again when `lost` (the state a server no longer knows) is
   * still the one kept. Shared by the steps of the pool: one step's cancel stops its own wait, not the opening.
   */
  private async opened(pool: string, signal: AbortSignal, lost?: PoolState): Promise<PoolState> {
    const kept = lost && this.pools.get(pool);
    if (kept && (await kept.catch(() => undefined)) === lost) {
      this.pools.delete(pool);
      if (!lost.passedOver) this.warn(`vigil: ${this.http.base} no longer has this runner's subscription to ${lost.monitor} (restarted without its state?): subscribing again`);
    }
    // A pool lost with its server's state starts again from the first generation, as a runner started
    // now does: both meet on the lowest one with slots (a server restarted empty has none passed over).
    const state = await orAborted(this.pool(pool, lost?.passedOver ? lost.generation + 1 : 1), signal);
    if (!state) throw signal.reason;
    return state;
  }

  private async tryTake(state: PoolState, cap: number, note: string, signal: AbortSignal): Promise<TakeResult> {
    const holders: string[] = [];
    for (let slot = 1; slot <= cap; slot++) {
      const subject = `slot-${slot}`;
      const own = state.mine.get(slot);
      if (own) {
        holders.push(own);
        continue;
      }
      try {
        const sentAt = Date.now();
        const reply = await this.http.request<{ fence?: number }>('POST', `/subscriptions/${state.sub.id}/leases/claim`, {
          token: state.sub.token,
          body: { subject, lease_duration_seconds: this.leaseSeconds, note },
          signal,
        });
        state.mine.set(slot, note);
        return { grant: this.held(state, slot, reply.fence ?? null, note, sentAt) };
      } catch (error) {
        const code = codeOf(error);
        if (code !== 'LEASE_HELD' && code !== 'NOT_FOUND') throw error;
        if (code === 'NOT_FOUND') {
          // The subscription is gone, or it is there and the slot is not: the monitor's slots are not published (yet).
          const unavailable = (await this.lost(state, signal)) ? `${this.http.base} lost this runner's subscription to ${state.monitor}; subscribing again` : await this.unpublished(state, signal);
          return { holders: [], unavailable };
        }
        holders.push(state.holders.get(subject) ?? 'another runner');
      }
    }
    return { holders };
  }

  /** What a waiting step is told of a pool whose slots are missing; the monitor is passed over once they never will be (and another try follows at once). */
  private async unpublished(state: PoolState, signal: AbortSignal): Promise<string> {
    if (!(await this.monitors.pastGrace(state.monitor, signal))) return `the slots of ${state.monitor} are not published yet (its maker may still be publishing them)`;
    state.passedOver = true;
    state.gone = true;
    return `${state.monitor} has no slots; opening the next`;
  }

  /** A claim answered NOT_FOUND: the subscription is gone when the server no longer knows it either (the slot's subject would be missing otherwise). */
  private async lost(state: PoolState, signal: AbortSignal): Promise<boolean> {
    try {
      await this.monitors.read(state, 0, signal);
      return false;
    } catch (error) {
      if (codeOf(error) !== 'NOT_FOUND') throw error;
      state.gone = true;
      return true;
    }
  }

  /**
   * A slot this runner holds: its lease renewed while the agent runs (LeaseFence: lost on LEASE_LOST or
   * NOT_FOUND, or once no renewal has reached the server for a whole lease), completed when released.
   * A lost slot is said once; its agent goes on (a slot caps load, it does not own work).
   */
  private held(state: PoolState, slot: number, fence: number | null, note: string, claimSentAt: number) {
    const subject = `slot-${slot}`;
    const path = `/subscriptions/${state.sub.id}/leases`;
    const body = { subject, ...(fence !== null ? { fence } : {}) };
    const lease = new LeaseFence({
      clock: systemClock,
      leaseSeconds: this.leaseSeconds,
      subject,
      grantSentAt: claimSentAt,
      renew: () => this.http.request('POST', `${path}/renew`, { token: state.sub.token, body: { ...body, lease_duration_seconds: this.leaseSeconds, note } }),
    });
    lease.signal.addEventListener('abort', () => this.warn(`vigil: ${state.monitor} ${subject} (${note}): ${lease.lostReason}; the agent goes on past the cap`), { once: true });
    this.leases.add(lease);
    return {
      slot,
      release: async () => {
        const expiresAt = Date.now() + lease.secondsLeft() * 1000;
        lease.stop();
        this.leases.delete(lease);
        // Ours until the completion is answered: a claim of it meanwhile would be answered "already yours".
        // Not waited for past 10 s: the step ends, and the completion is tried again in the background.
        const complete = () => this.http.request('POST', `${path}/complete`, { token: state.sub.token, body: { ...body, outcome: 'succeeded' }, timeoutMs: 10_000 });
        try {
          await complete();
        } catch (error) {
          // A server away when the agent ended: the slot is freed once it is back rather than when its lease
          // expires, which kept the others waiting up to concurrency_lease_seconds after it came back.
          if (error instanceof UnreachableError && !this.closing.signal.aborted) {
            void this.completeLater(complete, expiresAt).finally(() => state.mine.delete(slot));
            return;
          }
        }
        state.mine.delete(slot);
      },
    };
  }

  /** Tries a completion again every second, in the background, while the lease lasts and this runner runs. */
  private async completeLater(complete: () => Promise<unknown>, expiresAt: number): Promise<void> {
    while (Date.now() < expiresAt && (await sleep(1000, this.closing.signal))) {
      try {
        await complete();
        return;
      } catch (error) {
        if (!(error instanceof UnreachableError)) return;
      }
    }
  }

  async close(): Promise<void> {
    this.closing.abort();
    for (const lease of this.leases) lease.stop();
  }
}
