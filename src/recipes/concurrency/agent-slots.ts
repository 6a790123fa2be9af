// Holds a step's slots while its agent runs: a slot of its backend's pool,
// then one of `all` (caps.ts). Within one runner the steps of a pool wait in
// one line, in the order they asked; only the first of the line asks the
// store, and every step in the line is told who holds the slots.
import type { StepOutcome } from '../pool/step-task.ts';
import { poolsOf, slotName } from '../../workspace/concurrency-caps.ts';
import { orAborted } from '../../timing/or-aborted.ts';
import type { SlotGrant, SlotHolder, SlotStore } from './slot-store.ts';

export interface SlotRequest {
  backend: string;
  who: SlotHolder;
  signal: AbortSignal;
  /** The step's wait, told as it changes ("waiting for a claude slot: 2 of 2 held by …"); null once it has its slots. */
  onWait(message: string | null): void;
}

interface Line {
  tail: Promise<void>;
  /** What the first of the line last learnt, told to everyone in it. */
  told: string | null;
  listeners: Set<(message: string) => void>;
}

function joinHolders(holders: string[]): string {
  if (holders.length <= 1) return holders.join('');
  return `${holders.slice(0, -1).join(', ')} and ${holders.at(-1)}`;
}

export function waitMessage(pool: string, cap: number, holders: string[], ahead: number): string {
  const held = holders.length > 0 ? `: ${holders.length} of ${cap} held by ${joinHolders(holders)}` : '';
  return `waiting for ${slotName(pool)}${held}${ahead > 0 ? `; ${ahead} waiting ahead of it` : ''}`;
}

export class AgentSlots {
  private readonly lines = new Map<string, Line>();

  constructor(
    private readonly store: SlotStore,
    private readonly caps: Record<string, number>,
  ) {}

  get where(): string {
    return this.store.where;
  }

  /** True when steps of this backend take slots. */
  limits(backend: string): boolean {
    return poolsOf(backend, this.caps).length > 0;
  }

  /**
   * Runs `work` holding the step's slots, freed when it ends however it ends.
   * Resolves `{cancelled}` when the signal aborted while the step waited.
   */
  async hold<T>(req: SlotRequest, work: () => Promise<T>): Promise<T | { cancelled: string }> {
    const grants: SlotGrant[] = [];
    try {
      for (const { pool, cap } of poolsOf(req.backend, this.caps)) {
        const grant = await this.take(pool, cap, req);
        // The step's end clears its wait (a cleared wait alone reads as a slot taken).
        if (!grant) return { cancelled: `cancelled while waiting for ${slotName(pool)}` };
        grants.push(grant);
      }
      if (grants.length > 0) req.onWait(null);
      return await work();
    } finally {
      for (const g of grants.reverse()) await g.release().catch(() => {});
    }
  }

  private line(pool: string): Line {
    let line = this.lines.get(pool);
    if (!line) {
      line = { tail: Promise.resolve(), told: null, listeners: new Set() };
      this.lines.set(pool, line);
    }
    return line;
  }

  private async take(pool: string, cap: number, req: SlotRequest): Promise<SlotGrant | null> {
    const line = this.line(pool);
    const before = line.tail;
    let done!: () => void;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    line.tail = before.then(() => mine);
    let last: string | null = null;
    const listen = (message: string): void => {
      if (message === last) return;
      last = message;
      req.onWait(message);
    };
    line.listeners.add(listen);
    try {
      // Behind others of this runner: wait for them, told what the first of the line learns.
      if (line.told !== null) listen(line.told);
      await orAborted(before, req.signal);
      if (req.signal.aborted) return null;
      const waiter = await this.store.enter(pool, cap, req.who, req.signal);
      try {
        for (;;) {
          const result = await waiter.tryTake();
          if ('grant' in result) return result.grant;
          line.told = result.unavailable ? `waiting for ${slotName(pool)}: ${result.unavailable}` : waitMessage(pool, cap, result.holders, result.ahead ?? 0);
          for (const l of line.listeners) l(line.told);
          await waiter.changed(req.signal);
          if (req.signal.aborted) return null;
        }
      } finally {
        await waiter.leave().catch(() => {});
      }
    } catch (error) {
      // A request to the slots' server the cancel cut short: the step was cancelled while it waited.
      if (req.signal.aborted) return null;
      throw error;
    } finally {
      line.listeners.delete(listen);
      if (line.listeners.size === 0) line.told = null;
      // The next of the line goes once the one before it has gone.
      before.then(done, done);
    }
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/** A step's agent run holding its slots; a wait the run's cancellation ends is the step's cancellation. */
export async function withSlots(
  slots: AgentSlots | null | undefined,
  req: SlotRequest,
  work: () => Promise<StepOutcome>,
): Promise<StepOutcome> {
  if (!slots?.limits(req.backend)) return work();
  const result = await slots.hold(req, work);
  return 'cancelled' in result && !('status' in result) ? { status: 'cancelled', phases: 0, exitCode: null, reason: result.cancelled, notStarted: true } : (result as StepOutcome);
}
