// Three sentinel processes of one recipe on one monitor; 100 observations
// over 25 subjects; one sentinel SIGKILLed in the middle of a reaction and
// restarted. Reactions are counted from what the targets wrote. (Each
// reaction starts a shell and its commands: 100 show exactly once as well as
// the 200 this ran before, at about two thirds of the CPU.)
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, startFleet, until } from '../../bench/lib/sentinel-fleet.ts';

let fleet: Fleet | null = null;

afterEach(async () => {
  await fleet?.stop();
  fleet = null;
});

// The sentinel to be killed works slowly, so the kill lands while its reaction runs, even on a loaded machine.
const TARGET =
  'echo x > "$OUT/started/$OBSERVATION_SEQ.$(basename "$PWD")"; case "$PWD" in *sentinel-1) sleep 2;; *) sleep 0.2;; esac; echo "$OBSERVATION_SEQ" >> "$OUT/reactions.log"';

describe('sentinel fleet', () => {
  it('runs exactly one reaction per observation across 3 sentinels, one killed mid-reaction and restarted', { timeout: 240_000 }, async () => {
    fleet = await startFleet({ instances: 3, target: TARGET });
    const f = fleet;
    await until('the sentinels to subscribe', () => f.sentinels.every((s) => s.log().includes('subscribed to')));
    const publishing = f.publishAll(100, 25, 10, 100);
    // Kill sentinel 1 while one of its reactions is running.
    await until('sentinel 1 to be mid-reaction', () => readdirSync(join(f.out, 'started')).some((n) => n.endsWith('.sentinel-1')));
    await f.kill(1);
    const seqs = await publishing;
    f.start(1);
    await until('100 reactions', () => f.reactions().length >= 100, 180_000);
    // A marker published after them: once it has its reaction, the fleet has worked through what came before (no wait on the clock).
    const [marker] = await f.publishAll(1, 1, 1, 0);
    await until('the reaction to the marker', () => f.reactions().includes(marker!), 60_000);
    const seen = f.reactions().filter((seq) => seq !== marker);
    const repeated = seen.filter((seq, i) => seen.indexOf(seq) !== i);
    expect(repeated, `repeated: ${repeated.join(', ')}\n${f.sentinels.map((s) => s.log()).join('\n----\n')}`).toEqual([]);
    expect(seen).toHaveLength(100);
    expect(new Set(seen).size).toBe(100);
    expect([...seen].sort((a, b) => a - b)).toEqual([...seqs].sort((a, b) => a - b));
    // The kill interrupted a reaction that the restarted sentinel ran again.
    expect(f.sentinels[1]!.log()).toContain('was interrupted');
    // Every sentinel took part.
    for (let i = 0; i < 3; i++) expect(f.sentinels[i]!.log()).toMatch(/→ run \S+ succeeded/);
  });
});
