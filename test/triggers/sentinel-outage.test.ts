// A sentinel daemon across an outage of its server (killed with -9, then
// started again on its port and state file): it says the problem once, not
// once a second for as long as it lasts, says when it watches again, and
// reacts again to the observation whose reaction the outage fenced; a
// reaction that ended during the outage completes its lease once, said once.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from '../../bench/lib/sentinel-fleet.ts';
import { publish, replayAll, subscribe } from '../support/client.ts';
import { type ServerProcess, stablePort, startServerProcess, tempDir } from '../support/server-process.ts';
import { untilTrue } from '../support/until.ts';

let server: ServerProcess | undefined;
let fleet: Fleet | undefined;

afterEach(async () => {
  await fleet?.stop();
  await server?.kill();
  fleet = undefined;
  server = undefined;
});

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('sentinel across an outage of its server', () => {
  it('says "cannot reach" once per loop while the server is away, watches again once it is back, and reacts again', { timeout: 90_000 }, async () => {
    const port = await stablePort();
    const state = join(tempDir(), 'vigil.db');
    server = await startServerProcess({ port, state });
    // The reaction outlives the lease unless it is renewed: the outage fences it.
    fleet = await startFleet({ instances: 1, server, leaseSeconds: 3, target: 'echo "$OBSERVATION_SEQ" >> "$OUT/reactions.log"; sleep 60' });
    const log = () => fleet!.sentinels[0]!.log();
    await untilTrue('the sentinel to subscribe', () => log().includes('subscribed to'));
    const seq = (await publish(server.base, fleet.monitor, fleet.ownerToken, { type: 'ci.build', subject: 'job-1' })).body.seq as number;
    await untilTrue('the reaction to start', () => fleet!.reactions().includes(seq));
    // Its subscriptions' tokens are kept under the Vigil home, not in the project's .vigil/ (vigil.db and its WAL included).
    const dotVigil = join(fleet.sentinels[0]!.root, '.vigil');
    const kept = readdirSync(dotVigil).filter((f) => statSync(join(dotVigil, f)).isFile());
    expect(kept).toContain('vigil.db');
    for (const f of kept) expect(readFileSync(join(dotVigil, f), 'latin1'), f).not.toMatch(/vgs_/);

    await server.kill();
    // Fenced only once no renewal got through for a whole lease (3 s): by then the watch loop has
    // retried every second, and the subject's turn is retried after its fence.
    await untilTrue('the reaction to be fenced', () => log().includes('fenced'));
    await untilTrue('a turn of the subject to meet the outage', () => log().includes('subject "job-1": cannot reach'));

    server = await startServerProcess({ port, state });
    await untilTrue('the sentinel to watch again', () => log().includes(`watching ${fleet!.monitor} again after`));
    await untilTrue('the observation to be reacted to again', () => fleet!.reactions().filter((s) => s === seq).length === 2);

    const said = log();
    expect(count(said, 'cannot reach'), said).toBeLessThanOrEqual(2);
    expect(count(said, `sentinel react: cannot reach`), said).toBe(1);
    expect(count(said, 'subject "job-1": cannot reach'), said).toBe(1);
  });

  it('a reaction that ended while its server was away completes its lease once it is back, said once and not run again', { timeout: 90_000 }, async () => {
    const port = await stablePort();
    const state = join(tempDir(), 'vigil.db');
    server = await startServerProcess({ port, state });
    fleet = await startFleet({ instances: 1, server, target: 'echo "$OBSERVATION_SEQ" >> "$OUT/reactions.log"; until [ -e "$OUT/go" ]; do sleep 0.05; done' });
    const log = () => fleet!.sentinels[0]!.log();
    await untilTrue('the sentinel to subscribe', () => log().includes('subscribed to'));
    const seq = (await publish(server.base, fleet.monitor, fleet.ownerToken, { type: 'ci.build', subject: 'job-1' })).body.seq as number;
    await untilTrue('the reaction to start', () => fleet!.reactions().includes(seq));

    await server.kill();
    writeFileSync(join(fleet.out, 'go'), '');
    await untilTrue('its completion to meet the outage', () => log().includes('subject "job-1": cannot reach'));
    server = await startServerProcess({ port, state });
    const reader = await subscribe(server.base, { monitor: fleet.monitor, subscriber: 'test-reader', from: 'earliest' }, fleet.ownerToken);
    const leaseActions = async () =>
      (await replayAll(server!.base, reader)).filter((o) => o.type === 'ai.vigil.monitor.lease' && o.subject === 'job-1').map((o) => o.data.payload.action as string);
    await untilTrue('the lease to be completed', async () => (await leaseActions()).includes('complete'));
    expect(await leaseActions()).toEqual(['claim', 'complete']);
    expect(fleet.reactions()).toEqual([seq]);
    // It said "→ run … succeeded" again when the completion went through.
    expect(count(log(), `observation ${seq} (job-1) → run`), log()).toBe(1);
  });
});

