// The slots of a cap shared through a Vigil server (vigil.yml `server:`): the
// slots of pool P are the subjects `slot-1` … `slot-64` of the public monitor
// `vigil.concurrency.P`, and a step holds slot k by holding the lease on
// `slot-k` (protocol.md §12, §21): claimed before its agent starts, renewed
// with its fence while the agent runs, completed when it ends. A runner killed
// with -9 stops renewing, so its slots are free once their leases expire
// (`concurrency_lease_seconds`). Every runner subscribes to the monitor once
// per pool; each claim and renewal carries a note naming the run and step, so
// a waiting step can say who holds the slots.
//
// Only the monitor's maker may publish its slots, and a maker killed between
// making it and publishing them (or whose answer was lost with a server killed
// after its commit) leaves a monitor no claim can be granted on. Once it is
// UNPUBLISHED_GRACE_S old by the server's clock, with no slots still, every
// runner passes it over for the next generation, `vigil.concurrency.P.2`, …
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { withFileLock } from '../../file-lock/file-lock.ts';
import { ensureVigilHome } from '../../home/home.ts';
import { readJsonObject, writeJsonAtomic } from '../../json/json-file.ts';
import { observationTypes } from '../../protocol/vocabulary.ts';
import { answerWithinMs, ServerError, type ServerClient, serverClient, UnreachableError } from '../../server-client/server-client.ts';
import { LeaseFence } from '../../server-client/lease-fence.ts';
import { systemClock } from '../../actors/clock.ts';
import { orAborted } from '../../timing/or-aborted.ts';
import { holderText, type SlotHolder, type SlotStore, type SlotWaiter, type TakeResult } from './slot-store.ts';
import { sleep } from '../../timing/sleep.ts';

export const SLOT_TYPE = 'ai.vigil.concurrency.slot';
/** The most slots a pool has: the monitor is made with all of them, so a runner with a larger cap finds its slots there. */
export const MAX_SLOTS = 64;
const PULL_WAIT_S = 5;
/** How long a runner that has not reached the slots' server yet waits for it before failing the step. */
const FIRST_REACH_MS = answerWithinMs;
/**
 * How old a pool's monitor without slots must be before runners pass it over: twice the longest a
 * maker's publication may take to be answered, so that no slots arrive on a monitor once passed over.
 */
export const UNPUBLISHED_GRACE_S = (2 * answerWithinMs) / 1000;

/** The monitor of a pool's slots; generations after the first replace a monitor whose maker never published them. */
export const slotMonitorId = (pool: string, generation = 1): string => `vigil.concurrency.${pool}${generation > 1 ? `.${generation}` : ''}`;

interface Subscription {
  id: string;
  token: string;
  cursor: number;
}

interface PoolState {
  pool: string;
  generation: number;
  monitor: string;
  sub: Subscription;
  /** subject → who holds it, from the lease observations read so far. */
  holders: Map<string, string>;
  /** The slots this runner holds (claiming one again would answer "already yours"). */
  mine: Map<number, string>;
  /**
   * The server no longer has the subscription (restarted without its state: `npm start` keeps it in
   * memory): the pool is opened again, monitor and all, before the next claim.
   */
  gone: boolean;
  /** The monitor has no slots and never will (see the top of this file): the next generation is opened instead. */
  passedOver: boolean;
}

const codeOf = (error: unknown) => (error instanceof ServerError ? error.body.code : undefined);

export class ServerSlots implements SlotStore {
  readonly where: string;
  private readonly http: ServerClient;
  private readonly pools = new Map<string, Promise<PoolState>>();
  private readonly leases = new Set<LeaseFence>();

  constructor(
    server: { base: string; token?: string },
    private readonly leaseSeconds: number,
    private readonly warn: (line: string) => void,
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly unpublishedGraceS = UNPUBLISHED_GRACE_S,
  ) {
    this.http = serverClient(server.base);
    this.token = server.token;
    this.where = `leases on ${this.http.base}`;
  }

  private readonly token: string | undefined;

  private pool(pool: string, generation: number): Promise<PoolState> {
    let state = this.pools.get(pool);
    if (!state) {
      state = this.open(pool, generation);
      state.catch(() => this.pools.delete(pool));
      this.pools.set(pool, state);
    }
    return state;
  }

  /** Makes the pool's monitor when nobody has, and subscribes to it. */
  private async open(pool: string, generation: number): Promise<PoolState> {
    const monitor = slotMonitorId(pool, generation);
    try {
      const made = await this.http.request<{ owner_token: string }>('POST', '/monitors', {
        ...(this.token ? { token: this.token } : {}),
        body: {
          id: monitor,
          name: `concurrency: ${pool}`,
          description: `the slots of the concurrency cap "${pool}" of vigil.yml: one lease per agent running`,
          visibility: 'public',
          capabilities: ['observe', 'act'],
          default_grant: ['observe', 'act'],
          types: [SLOT_TYPE],
          reason: 'vigil sequence keeps its concurrency caps here',
        },
      });
      const observations = Array.from({ length: MAX_SLOTS }, (_, i) => ({ type: SLOT_TYPE, subject: `slot-${i + 1}`, data: { pool, slot: i + 1 } }));
      await this.http.request('POST', `/monitors/${monitor}/observations`, { token: made.owner_token, body: { observations } });
      this.keepOwnerToken(monitor, made.owner_token);
      if (generation > 1)
        this.warn(`vigil: made ${monitor} on ${this.http.base} for the slots of "${pool}": ${slotMonitorId(pool, generation - 1)} has no slots (its maker stopped before publishing them)`);
    } catch (error) {
      if (codeOf(error) !== 'DUPLICATE') throw error;
    }
    const reply = await this.subscribe(monitor);
    const { head } = await this.http.request<{ head: number }>('GET', `/monitors/${monitor}`);
    const state: PoolState = {
      pool,
      generation,
      monitor,
      sub: { id: reply.subscription.id, token: reply.token, cursor: Math.max(1, head - 500) },
      holders: new Map(),
      mine: new Map(),
      gone: false,
      passedOver: false,
    };
    await this.read(state, 0);
    return state;
  }

  /**
   * This runner's subscription to the pool. A subscription the server made while its answer was lost
   * (the server killed after its commit) holds the runner's name, and only its token could subscribe
   * under it again: the next try takes a name of its own (the lost one retires after a day unused).
   */
  private async subscribe(monitor: string): Promise<{ subscription: { id: string; cursor: number }; token: string }> {
    const name = `runner ${hostname()} pid ${process.pid}`;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.http.request('POST', '/subscriptions', {
          body: { monitor, subscriber: attempt === 1 ? name : `${name} #${attempt}`, capabilities: ['observe', 'act'], from: 'head', retire_after_mute_seconds: 86400 },
        });
      } catch (error) {
        if (codeOf(error) === 'UNAUTHORIZED' && attempt < 5) continue;
        if (codeOf(error) === 'NOT_FOUND' || codeOf(error) === 'CAPABILITY_MISSING')
          throw new Error(`monitor ${monitor} on ${this.http.base} is not open to every runner (it must be public, granting observe and act); retire it or choose another server`);
        throw error;
      }
    }
  }

  /** The monitor's owner token, kept for its maker: the dashboard shows a monitor's lease timeline to its owner (and the admin). */
  private keepOwnerToken(monitor: string, token: string): void {
    try {
      const file = join(ensureVigilHome(this.env), 'concurrency', 'monitors.json');
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      // Under a lock: two runners making two pools' monitors at once each kept only their own.
      withFileLock(`${file}.lock`, 'TIMEOUT', () => {
        const kept = readJsonObject<string>(file) ?? {};
        kept[`${this.http.base}#${monitor}`] = token;
        writeJsonAtomic(file, kept, 0o600);
      });
    } catch (error) {
      this.warn(`vigil: could not keep the owner token of ${monitor}: ${(error as Error).message}`);
    }
  }

  /** Reads the lease observations since the last read (waiting up to `wait` s for one): who holds which slot. */
  private async read(state: PoolState, wait: number, signal?: AbortSignal): Promise<void> {
    // Only lease changes: woken by every refusal record (each refused claim of a waiting runner is one),
    // waiting runners would wake each other in turn and fill the monitor with refusals.
    const q = new URLSearchParams({ cursor: String(state.sub.cursor), wait: String(wait), limit: '1000', types: observationTypes.lease });
    const page = await this.http.request<{ next: number; observations: Array<{ type: string; subject: string | null; data?: Record<string, unknown> }> }>(
      'GET',
      `/subscriptions/${state.sub.id}/pull?${q}`,
      { token: state.sub.token, timeoutMs: wait * 1000 + answerWithinMs, ...(signal ? { signal } : {}) },
    );
    for (const o of page.observations) {
      if (o.type !== observationTypes.lease || !o.subject) continue;
      // A bookkeeping observation keeps what happened under data.payload.
      const payload = (o.data?.payload ?? {}) as { action?: string; note?: string; holder?: string };
      if (payload.action === 'claim' || payload.action === 'renew') state.holders.set(o.subject, payload.note ?? payload.holder ?? 'another runner');
      else state.holders.delete(o.subject);
    }
    state.sub.cursor = page.next;
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
        await this.read(opened, PULL_WAIT_S, signal).catch(async (error: Error) => {
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
    const state = await orAborted(this.pool(pool, lost ? lost.generation + (lost.passedOver ? 1 : 0) : 1), signal);
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
        if (code === 'NOT_FOUND' && (await this.lost(state, signal))) return { holders: [], unavailable: `${this.http.base} lost this runner's subscription to ${state.monitor}; subscribing again` };
        // The subscription is there and the slot is not: the monitor's slots are not published (yet).
        if (code === 'NOT_FOUND') return { holders: [], unavailable: await this.unpublished(state, signal) };
        holders.push(state.holders.get(subject) ?? 'another runner');
      }
    }
    return { holders };
  }

  /** A claim answered NOT_FOUND: the subscription is gone when the server no longer knows it either (the slot's subject would be missing otherwise). */
  private async lost(state: PoolState, signal: AbortSignal): Promise<boolean> {
    try {
      await this.read(state, 0, signal);
      return false;
    } catch (error) {
      if (codeOf(error) !== 'NOT_FOUND') throw error;
      state.gone = true;
      return true;
    }
  }

  /** What a waiting step is told of a pool whose slots are missing; passes the monitor over once they never will be (and another try follows at once). */
  private async unpublished(state: PoolState, signal: AbortSignal): Promise<string> {
    const { created } = await this.http.request<{ created: string }>('GET', `/monitors/${state.monitor}`, { signal });
    const { as_of } = await this.http.request<{ as_of: string }>('GET', `/monitors/${state.monitor}/state`, { signal });
    if (Date.parse(as_of) - Date.parse(created) < this.unpublishedGraceS * 1000) return `the slots of ${state.monitor} are not published yet (its maker may still be publishing them)`;
    state.passedOver = true;
    state.gone = true;
    return `${state.monitor} has no slots; opening the next`;
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
        lease.stop();
        this.leases.delete(lease);
        // Ours until the completion is answered: a claim of it meanwhile would be answered "already yours".
        // Not waited for past 10 s: a server that does not answer frees the slot when its lease expires.
        await this.http.request('POST', `${path}/complete`, { token: state.sub.token, body: { ...body, outcome: 'succeeded' }, timeoutMs: 10_000 }).catch(() => {});
        state.mine.delete(slot);
      },
    };
  }

  async close(): Promise<void> {
    for (const lease of this.leases) lease.stop();
  }
}
