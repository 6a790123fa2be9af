// The monitor that keeps a pool's slots on a Vigil server, and this runner's
// subscription to it (server-slots.ts claims the slots): made with its
// `slot-1` … `slot-64` by the first runner that needs it, passed over for the
// next generation when its maker stopped before publishing them, and read for
// who holds which slot.
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
import { answerWithinMs, ServerError, type ServerClient } from '../../server-client/server-client.ts';

export const SLOT_TYPE = 'ai.vigil.concurrency.slot';
/** The most slots a pool has: the monitor is made with all of them, so a runner with a larger cap finds its slots there. */
export const MAX_SLOTS = 64;

/**
 * How old a pool's monitor without slots must be before runners pass it over: twice the longest a
 * maker's publication may take to be answered, so that no slots arrive on a monitor once passed over.
 */
export const UNPUBLISHED_GRACE_S = (2 * answerWithinMs) / 1000;

/** The monitor of a pool's slots; generations after the first replace a monitor whose maker never published them. */
export const slotMonitorId = (pool: string, generation = 1): string => `vigil.concurrency.${pool}${generation > 1 ? `.${generation}` : ''}`;

export interface Subscription {
  id: string;
  token: string;
  cursor: number;
}

export interface PoolState {
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

export const codeOf = (error: unknown) => (error instanceof ServerError ? error.body.code : undefined);

export class SlotPoolMonitors {
  constructor(
    private readonly http: ServerClient,
    /** The server's admin or registration bearer of vigil.yml `server.token`, for making monitors. */
    private readonly token: string | undefined,
    private readonly warn: (line: string) => void,
    private readonly env: NodeJS.ProcessEnv,
    private readonly unpublishedGraceS: number,
  ) {}

  /** Makes the pool's monitor when nobody has, and subscribes to it. */
  async open(pool: string, generation: number): Promise<PoolState> {
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
  async read(state: PoolState, wait: number, signal?: AbortSignal): Promise<void> {
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

  /** Whether a pool's monitor without slots is old enough to be passed over (UNPUBLISHED_GRACE_S), by the server's clock. */
  async pastGrace(monitor: string, signal: AbortSignal): Promise<boolean> {
    const { created } = await this.http.request<{ created: string }>('GET', `/monitors/${monitor}`, { signal });
    const { as_of } = await this.http.request<{ as_of: string }>('GET', `/monitors/${monitor}/state`, { signal });
    return Date.parse(as_of) - Date.parse(created) >= this.unpublishedGraceS * 1000;
  }
}
