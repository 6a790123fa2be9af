// The rules of turns between nodes on a monitor they keep writing
// (src/cluster/turns.ts), on a manual clock: when a node asks the others to
// hold their batches, for how long, who yields to whom, and when they go on.
import { describe, expect, it } from 'vitest';
import { askAfterLosses, holdMs, maxHoldMs, parseTurnMessage, type TurnMessage, Turns } from '../../src/cluster/turns.ts';

function node(id: string, monitorsHeld: readonly number[] = [7, 8, 9]) {
  const clock = { now: 1_000 };
  const sent: TurnMessage[] = [];
  const holds: number[] = [];
  const turns = new Turns({ nodeId: () => id, send: (m) => sent.push(m), holdUntil: (at) => holds.push(at), holdsMonitor: (m) => monitorsHeld.includes(m), now: () => clock.now });
  return { turns, sent, holds, clock };
}

describe('turns on a monitor several nodes write', () => {
  it('asks once a request has lost a few races, and again at every race it still loses', () => {
    const a = node('node-a');
    a.turns.lost([7], askAfterLosses - 1, 900);
    expect(a.sent).toEqual([]);
    a.turns.lost([7], askAfterLosses, 900);
    expect(a.sent).toEqual([{ m: 7, n: 'node-a', waited: 100, hold: holdMs }]);
    // Lost again while its ask still holds: a node that did not hold (it had its own request waiting
    // longer, or heard the ask after it took its next batch) is asked again.
    a.clock.now += 10;
    a.turns.lost([7], askAfterLosses + 1, 950);
    // The ask carries how long the oldest request still waiting has waited (a duration: clocks differ).
    expect(a.sent).toEqual([
      { m: 7, n: 'node-a', waited: 100, hold: holdMs },
      { m: 7, n: 'node-a', waited: 110, hold: holdMs },
    ]);
  });

  it('asks for twice its attempts\' average when they take longer than the shortest hold, up to the longest', () => {
    const a = node('node-a');
    // Four races lost in 400 ms: 100 ms an attempt, a hold of 200 ms.
    a.turns.lost([7], askAfterLosses + 1, a.clock.now - 400);
    expect(a.sent.at(-1)).toMatchObject({ hold: 200 });
    // A machine so short of CPU that an attempt takes seconds: the hold stops at the longest.
    a.turns.lost([7], askAfterLosses + 2, a.clock.now - 50_000);
    expect(a.sent.at(-1)).toMatchObject({ hold: maxHoldMs });
    // Fast attempts: the shortest hold.
    a.turns.lost([8], askAfterLosses, a.clock.now - 30);
    expect(a.sent.at(-1)).toMatchObject({ m: 8, hold: holdMs });
  });

  it('says it is done once its request on the monitor is over, and only if its ask still held the others', () => {
    const a = node('node-a');
    a.turns.lost([7, 8], askAfterLosses, 900);
    a.turns.finished([7]);
    expect(a.sent.at(-1)).toEqual({ m: 7, n: 'node-a', done: true });
    a.clock.now += holdMs;
    a.turns.finished([8]);
    expect(a.sent.filter((m) => 'done' in m)).toHaveLength(1);
    // Not waiting any more: a commit says nothing.
    a.turns.finished([7]);
    expect(a.sent.filter((m) => 'done' in m)).toHaveLength(1);
  });

  it('holds its batches for another node, at most the longest hold, and goes on when it is done', () => {
    const b = node('node-b');
    b.turns.heard({ m: 7, n: 'node-a', waited: 100, hold: 60_000 });
    expect(b.holds).toEqual([1_000 + maxHoldMs]);
    b.turns.heard({ m: 7, n: 'node-a', done: true });
    expect(b.holds.at(-1)).toBe(0);
    // Its own messages come back on the channel: ignored.
    b.turns.heard({ m: 7, n: 'node-b', waited: 100, hold: holdMs });
    expect(b.holds).toHaveLength(2);
  });

  it('does not hold for a node whose request has waited less than its own, on any monitor', () => {
    const b = node('node-b');
    b.turns.lost([7], askAfterLosses, 800);
    b.turns.heard({ m: 7, n: 'node-a', waited: 100, hold: holdMs });
    b.turns.heard({ m: 8, n: 'node-a', waited: 100, hold: holdMs });
    expect(b.holds).toEqual([]);
    // Waiting as long: the lower id goes first.
    b.turns.heard({ m: 7, n: 'node-a', waited: 200, hold: holdMs });
    expect(b.holds).toEqual([1_000 + holdMs]);
    // A node waiting less holds for the older asker, whichever monitor either waits on.
    const c = node('node-c');
    c.turns.lost([8], askAfterLosses, 950);
    c.turns.heard({ m: 7, n: 'node-a', waited: 100, hold: holdMs });
    expect(c.holds).toEqual([1_000 + holdMs]);
    // Once its batch stood it waits no more, and holds for anyone.
    b.turns.finished([7]);
    b.clock.now += holdMs;
    b.turns.heard({ m: 9, n: 'node-d', waited: 110, hold: holdMs });
    expect(b.holds).toEqual([1_000 + holdMs, 1_000 + 2 * holdMs]);
  });

  it('orders by how long each request has waited, whatever the nodes\' clocks say', () => {
    const e = node('node-e');
    e.clock.now = 5_000_000;
    // Its own request has waited 50 ms; the asker's 100 ms: the asker goes first.
    e.turns.lost([7], askAfterLosses, e.clock.now - 50);
    e.turns.heard({ m: 7, n: 'node-a', waited: 100, hold: holdMs });
    expect(e.holds).toEqual([5_000_000 + holdMs]);
  });

  it('forgets a monitor on which none of its requests has lost for a second (they gave up): it holds for others again', () => {
    const b = node('node-b');
    b.turns.lost([7], askAfterLosses, 800);
    b.clock.now += 1_001;
    b.turns.heard({ m: 8, n: 'node-a', waited: 50, hold: holdMs });
    expect(b.holds).toEqual([b.clock.now + holdMs]);
  });

  it('does not hold for a monitor it holds nothing of (it has no write of it to hold back)', () => {
    const d = node('node-d', [8]);
    d.turns.heard({ m: 7, n: 'node-a', waited: 100, hold: holdMs });
    expect(d.holds).toEqual([]);
  });

  it('a done from another asker than the one held for does not end the hold', () => {
    const c = node('node-c');
    c.turns.heard({ m: 7, n: 'node-a', waited: 100, hold: holdMs });
    c.turns.heard({ m: 7, n: 'node-b', done: true });
    expect(c.holds).toEqual([1_000 + holdMs]);
  });

  it('reads only well-formed messages from the channel', () => {
    expect(parseTurnMessage('{"m":7,"n":"node-a","waited":100,"hold":100}')).toEqual({ m: 7, n: 'node-a', waited: 100, hold: 100 });
    expect(parseTurnMessage('{"m":7,"n":"node-a","done":true}')).toEqual({ m: 7, n: 'node-a', done: true });
    for (const bad of [undefined, '', 'not json', '7:3:1', '{"m":"7","n":"a","done":true}', '{"m":7,"done":true}', '{"m":7,"n":"a","waited":"x","hold":1}', 'null']) {
      expect(parseTurnMessage(bad)).toBeUndefined();
    }
  });
});
