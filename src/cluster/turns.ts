// Turns on a monitor that several nodes keep writing. Commits are optimistic
// (a batch stands only if the monitor's rev is still the one the node read),
// and that favours the node that just committed: its memory is current at
// once, while a node that lost must reload and catch up first, a window in
// which the others commit again. Under steady load one node lost race after
// race: its requests took up to 16 s (or failed after 50 attempts), while
// the others answered in milliseconds. So a node whose request has lost
// three races on a monitor asks the other nodes, on the turns channel, to
// hold their next batches for a moment (twice its attempts' average, within
// bounds), and asks again at each race it still loses; they hold, unless a
// request of theirs has waited longer, and go on when it says it is done
// (its batch stood, or the request ended without one) or the moment ends.
// Best effort by design: the database still decides every race, and a hold
// ends by itself (a paused or dead asker holds nobody for long).

/**
 * Sent on this channel as JSON: an ask to hold (`hold` ms) for a request that has waited `waited` ms
 * (a duration, not a time: nodes' clocks need not agree), or `done` once the asker's request is over.
 */
export const turnsChannel = 'vigil_turns';

/** The shortest hold a node asks for (its batch usually stands well before it ends). */
export const holdMs = 100;
/**
 * The longest hold a node asks for, or grants: a request whose attempts take long (a machine short of
 * CPU, a slow database) asks for twice its average attempt, since a hold that ends before its next
 * attempt commits lets the others win again (one write lost 12 races with 100 ms holds in a loaded CI
 * run). A hold holds all of a node's batches, whichever monitors they write (a write's monitors are
 * known only once it runs), so this is also how long a paused or dead asker stalls the others at most.
 */
export const maxHoldMs = 500;
/**
 * A request that lost this many races on a monitor makes its node ask for a turn. After two, nodes
 * asked so often that the holds cost a seventh of the throughput of named claims across three nodes;
 * after three, the throughput stayed and the slowest request still fell from seconds to under one.
 */
export const askAfterLosses = 3;

export type TurnMessage = { m: number; n: string; waited: number; hold: number } | { m: number; n: string; done: true };

export interface TurnParts {
  /** This node's id (set once it listens). */
  nodeId(): string;
  /** Sends a message to every node (pg_notify on the turns channel); a failure only costs the turn. */
  send(message: TurnMessage): void;
  /** Holds this node's batches until `atMs` (0: goes on now). */
  holdUntil(atMs: number): void;
  /** This node holds the monitor in memory: only then can a batch of its write it. */
  holdsMonitor(mkey: number): boolean;
  now(): number;
}

interface Waiting {
  /** When the oldest request still losing on the monitor began. */
  readonly since: number;
  /** Until when the last ask holds the others. */
  readonly askedUntil: number;
  /** When a request last lost on the monitor. */
  readonly lastLoss: number;
}

/**
 * A monitor on which no request has lost for this long is not waited on any more (its requests gave
 * up, or stood in a batch of another monitor's): it must not keep this node first for ever. A request
 * still waiting loses again sooner, and comes back with its own start.
 */
const forgetAfterMs = 1000;

export class Turns {
  /** Monitors on which this node's requests keep losing. */
  private readonly waiting = new Map<number, Waiting>();
  /** Who this node holds its batches for: the monitor and asker, until when. */
  private holding: { m: number; n: string; until: number } | undefined;
  /** Asks this node sent, and asks of others it held its batches for (/admin/snapshot). */
  readonly counts = { asked: 0, heldFor: 0 };

  constructor(private readonly parts: TurnParts) {}

  /** A request that began at `since` lost its `losses`-th race on these monitors. */
  lost(mkeys: Iterable<number>, losses: number, since: number): void {
    if (losses < askAfterLosses) return;
    const now = this.parts.now();
    for (const m of mkeys) {
      // Asked again at every loss, also while an ask still holds: a node that did not hold then (its
      // own request had waited longer, or the ask reached it after it had taken its next batch) holds
      // now, and those holding hold on.
      const hold = holdFor(now - since, losses);
      const oldest = Math.min(since, this.waiting.get(m)?.since ?? since);
      this.waiting.set(m, { since: oldest, askedUntil: now + hold, lastLoss: now });
      this.counts.asked++;
      this.parts.send({ m, n: this.parts.nodeId(), waited: now - oldest, hold });
    }
  }

  /**
   * This node's batch on these monitors stood, or the request that lost on them ended without one (it
   * found nothing left to do, or gave up): the others go on.
   */
  finished(mkeys: Iterable<number>): void {
    for (const m of mkeys) {
      const waiting = this.waiting.get(m);
      if (!waiting) continue;
      this.waiting.delete(m);
      if (waiting.askedUntil > this.parts.now()) this.parts.send({ m, n: this.parts.nodeId(), done: true });
    }
  }

  /** A message another node sent (this node's own come back too, and are ignored). */
  heard(message: TurnMessage): void {
    const self = this.parts.nodeId();
    if (message.n === self) return;
    if ('done' in message) {
      if (this.holding?.m === message.m && this.holding.n === message.n) this.release();
      return;
    }
    // A node that holds nothing of the monitor has no write of it to hold back.
    if (!this.parts.holdsMonitor(message.m)) return;
    // A node that has waited longer itself keeps its turn (ties go to the lower id): the oldest waiting
    // request goes first, and two nodes never hold for each other.
    const now = this.parts.now();
    const theirs = now - message.waited;
    const mine = this.oldestWaiting(now);
    if (mine !== undefined && (mine < theirs || (mine === theirs && self < message.n))) return;
    const until = now + Math.min(Math.max(message.hold, 0), maxHoldMs);
    if (this.holding && this.holding.until >= until) return;
    this.holding = { m: message.m, n: message.n, until };
    this.counts.heldFor++;
    this.parts.holdUntil(until);
  }

  /** When this node's oldest request still losing on any monitor began. */
  private oldestWaiting(now: number): number | undefined {
    let oldest: number | undefined;
    for (const [m, { since, lastLoss }] of this.waiting) {
      if (lastLoss < now - forgetAfterMs) this.waiting.delete(m);
      else if (oldest === undefined || since < oldest) oldest = since;
    }
    return oldest;
  }

  private release(): void {
    this.holding = undefined;
    this.parts.holdUntil(0);
  }
}

/** The hold asked for a request that lost `losses` races in `waitedMs`: twice its average attempt, within the bounds. */
function holdFor(waitedMs: number, losses: number): number {
  return Math.round(Math.min(maxHoldMs, Math.max(holdMs, (2 * waitedMs) / losses)));
}

/** A turns message read from the channel, or undefined for anything else. */
export function parseTurnMessage(payload: string | undefined): TurnMessage | undefined {
  if (!payload) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { m, n, waited, hold, done } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(m) || typeof n !== 'string') return undefined;
  if (done === true) return { m: m as number, n, done: true };
  if (typeof waited !== 'number' || typeof hold !== 'number' || !Number.isFinite(waited) || !Number.isFinite(hold)) return undefined;
  return { m: m as number, n, waited, hold };
}
