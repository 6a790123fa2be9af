// The races a node's writes run against the other nodes': a request or a
// source's write whose batch lost (another node moved the monitor first)
// runs again, up to a bound, and its node asks the others for a turn once it
// keeps losing (turns.ts). Counted for /admin/snapshot.
import { setTimeout as sleep } from 'node:timers/promises';
import { ProtocolError } from '../protocol/errors.ts';
import type { ClusterContention } from '../service/cluster-hooks.ts';
import { isClusterConflict } from '../store/cluster-conflict.ts';
import type { Turns } from './turns.ts';

/** A write that lost this many races is refused (STORE_UNAVAILABLE): the client tries again later. */
const maxAttempts = 50;

/**
 * Told after each attempt that failed: rethrows what is not a lost race, and a lost race past the
 * bound; otherwise waits a little before the next attempt.
 */
export type LostRace = (error: unknown, tries: number) => Promise<void>;

export class Races {
  private lostRaces = 0;
  private gaveUp = 0;
  private mostLost = 0;

  constructor(
    private readonly turns: Turns,
    private readonly log: (line: string) => void,
    /** Waits between attempts (a manual clock's in tests). */
    private readonly pause: (ms: number) => Promise<unknown> = sleep,
  ) {}

  /** Runs one request's or source write's attempts; once it ends, nodes holding their batches for it go on. */
  async run<T>(attempts: (lost: LostRace) => Promise<T>): Promise<T> {
    const since = Date.now();
    let lostOn: Set<number> | undefined;
    try {
      return await attempts(async (error, tries) => {
        if (!isClusterConflict(error)) throw error;
        this.lostRaces++;
        this.mostLost = Math.max(this.mostLost, tries);
        lostOn ??= new Set();
        for (const mkey of error.monitors) lostOn.add(mkey);
        this.turns.lost(error.monitors, tries, since);
        if (tries >= maxAttempts) {
          this.gaveUp++;
          this.log(`vigil: gave up after ${maxAttempts} lost races; the last, on monitor(s) ${[...error.monitors].join(', ')}: ${error.message}`);
          throw new ProtocolError('STORE_UNAVAILABLE', `Other nodes kept changing this monitor; the change was not stored after ${maxAttempts} attempts. Try again.`, {}, { cause: error });
        }
        // Spread the retries of nodes that keep colliding.
        await this.pause(Math.random() * Math.min(50, tries * 2));
      });
    } finally {
      if (lostOn) this.turns.finished(lostOn);
    }
  }

  get contention(): ClusterContention {
    return {
      lost_races: this.lostRaces,
      most_lost_by_one_write: this.mostLost,
      gave_up: this.gaveUp,
      turns_asked: this.turns.counts.asked,
      turns_held_for_others: this.turns.counts.heldFor,
    };
  }
}
