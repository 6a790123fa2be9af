// The order of a node's catch-ups on a monitor (src/cluster/sync-queue.ts):
// one after another per monitor, and a catch-up asked for while one of its
// kind waits its turn joins it, with the highest rev its joiners need.
import { describe, expect, it } from 'vitest';
import { SyncQueue } from '../../src/cluster/sync-queue.ts';

function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('the catch-ups of a monitor', () => {
  it('run one after another per monitor, and monitors do not wait for each other', async () => {
    const queue = new SyncQueue();
    const ran: string[] = [];
    const first = gate();
    const a1 = queue.run(1, async () => {
      await first.opened;
      ran.push('1a');
    });
    const a2 = queue.run(1, async () => void ran.push('1b'));
    await queue.run(2, async () => void ran.push('2'));
    expect(ran).toEqual(['2']);
    expect(queue.busy(1)).toBe(true);
    first.open();
    await Promise.all([a1, a2]);
    expect(ran).toEqual(['2', '1a', '1b']);
    expect(queue.busy(1)).toBe(false);
  });

  it('joins a waiting delta with the highest rev asked for, and never one under way', async () => {
    const queue = new SyncQueue();
    const running = gate();
    const started = gate();
    const runs: Array<number | undefined> = [];
    const underWay = queue.run(1, async (until) => {
      runs.push(until);
      started.open();
      await running.opened;
    }, { mode: 'delta', until: 5 });
    await started.opened;
    const work = async (until: number | undefined) => void runs.push(until);
    const joined = [queue.run(1, work, { mode: 'delta', until: 7 }), queue.run(1, work, { mode: 'delta', until: 9 }), queue.run(1, work, { mode: 'delta', until: 8 })];
    // A refresh is a different kind: it queues after the waiting delta.
    const refresh = queue.run(1, async () => void runs.push(-1), { mode: 'refresh' });
    running.open();
    await Promise.all([underWay, ...joined, refresh]);
    expect(runs).toEqual([5, 9, -1]);
  });

  it('a delta that needs whatever the database holds makes its joined catch-up read, whatever else was asked', async () => {
    const queue = new SyncQueue();
    const running = gate();
    const runs: Array<number | undefined> = [];
    const underWay = queue.run(1, () => running.opened);
    const work = async (until: number | undefined) => void runs.push(until);
    const joined = [queue.run(1, work, { mode: 'delta', until: 7 }), queue.run(1, work, { mode: 'delta', until: undefined })];
    running.open();
    await Promise.all([underWay, ...joined]);
    expect(runs).toEqual([undefined]);
  });

  it('goes on after a catch-up that failed, and drain waits for all', async () => {
    const queue = new SyncQueue();
    const failed = queue.run(1, async () => {
      throw new Error('database gone');
    });
    let after = false;
    const next = queue.run(1, async () => {
      after = true;
    });
    await expect(failed).rejects.toThrow('database gone');
    await queue.drain();
    await next;
    expect(after).toBe(true);
  });
});
