// A node's writes racing the other nodes' (src/cluster/races.ts), in-process
// with the real turns and no waiting between attempts: when a write runs
// again, when it gives up, what the operator's counts say, and that the
// nodes holding their batches for a write hear when it is over, however it
// ends.
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/protocol/errors.ts';
import { Races } from '../../src/cluster/races.ts';
import { askAfterLosses, type TurnMessage, Turns } from '../../src/cluster/turns.ts';
import { ClusterConflictError } from '../../src/store/cluster-conflict.ts';

function node() {
  const sent: TurnMessage[] = [];
  const logged: string[] = [];
  const turns = new Turns({ nodeId: () => 'node-a', send: (m) => sent.push(m), holdUntil: () => {}, holdsMonitor: () => true, now: Date.now });
  const races = new Races(turns, (line) => logged.push(line), async () => {});
  return { races, sent, logged };
}

/** An attempt that loses its first `losses` races on monitor 7, then does `then`. */
function losing<T>(losses: number, then: () => T) {
  let attempts = 0;
  return async (lost: (error: unknown, tries: number) => Promise<void>): Promise<T> => {
    for (let tries = 1; ; tries++) {
      try {
        if (++attempts <= losses) throw new ClusterConflictError(new Set([7]));
        return then();
      } catch (error) {
        await lost(error, tries);
      }
    }
  };
}

describe('a node racing the others on a monitor', () => {
  it('runs a write again after each lost race and counts them; a write that never lost asks nothing', async () => {
    const { races, sent } = node();
    expect(await races.run(losing(0, () => 'first try'))).toBe('first try');
    expect(sent).toEqual([]);
    expect(await races.run(losing(2, () => 'third try'))).toBe('third try');
    expect(races.contention).toMatchObject({ lost_races: 2, most_lost_by_one_write: 2, gave_up: 0, turns_asked: 0 });
  });

  it('tells the nodes holding for it to go on when the write ends without a batch (it found nothing to do)', async () => {
    const { races, sent } = node();
    const refusal = new ProtocolError('NO_WORK', 'no subject to take');
    await expect(races.run(losing(askAfterLosses, () => { throw refusal; }))).rejects.toBe(refusal);
    expect(sent.filter((m) => !('done' in m))).toHaveLength(1);
    expect(sent.at(-1)).toEqual({ m: 7, n: 'node-a', done: true });
  });

  it('gives up after 50 lost races with STORE_UNAVAILABLE, logs it, and counts it', async () => {
    const { races, sent, logged } = node();
    const run = races.run(losing(Number.POSITIVE_INFINITY, () => 'never'));
    await expect(run).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining('after 50 attempts') });
    expect(races.contention).toMatchObject({ lost_races: 50, most_lost_by_one_write: 50, gave_up: 1 });
    expect(logged).toEqual([expect.stringContaining('gave up after 50 lost races; the last, on monitor(s) 7')]);
    // It asked at every loss from the third, and said it was done when it gave up.
    expect(sent.filter((m) => !('done' in m))).toHaveLength(50 - askAfterLosses + 1);
    expect(sent.at(-1)).toEqual({ m: 7, n: 'node-a', done: true });
  });

  it('rethrows at once what is not a lost race', async () => {
    const { races } = node();
    const failure = new Error('the database is gone');
    await expect(races.run(async (lost) => lost(failure, 1))).rejects.toBe(failure);
    expect(races.contention.lost_races).toBe(0);
  });
});
