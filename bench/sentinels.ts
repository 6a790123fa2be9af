// Sentinel throughput: 3 sentinel daemons of one recipe with a no-op target
// (it only appends the seq to a file, which is how reactions are counted)
// react to N observations over M subjects; reactions/s is set beside the raw
// lease-claim rate of the same server measured in the same run (claims of
// distinct subjects, one at a time and 16 in flight). Figures are indicative:
// the machine is shared and loaded. Run: npx tsx bench/sentinels.ts [N] [M]
import { startFleet, until } from './lib/sentinel-fleet.ts';
import { call, createMonitor, publish, subscribe } from '../test/support/client.ts';

const N = Number(process.argv[2] ?? 300);
const M = Number(process.argv[3] ?? 100);

async function claimRate(base: string, inFlight: number, subjects: number): Promise<number> {
  const { id, ownerToken } = await createMonitor(base, { capabilities: ['observe', 'act'] });
  for (let from = 0; from < subjects; from += 1000) {
    const observations = Array.from({ length: Math.min(1000, subjects - from) }, (_, i) => ({ type: 'work.item', subject: `c-${from + i}` }));
    const reply = await publish(base, id, ownerToken, { observations });
    if (reply.status !== 201) throw new Error(`publish: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  const sub = await subscribe(base, { monitor: id, subscriber: 'bench:claims', capabilities: ['observe', 'act'] }, ownerToken);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < subjects) {
        const subject = `c-${next++}`;
        const reply = await call(base, 'POST', `/subscriptions/${sub.id}/leases/claim`, { token: sub.token, body: { subject } });
        if (reply.status !== 201) throw new Error(`claim ${subject}: ${reply.status}`);
      }
    }),
  );
  return subjects / ((performance.now() - started) / 1000);
}

const fleet = await startFleet({ instances: 3, concurrency: 8, target: 'echo "$OBSERVATION_SEQ" >> "$OUT/reactions.log"' });
try {
  await until('the sentinels to subscribe', () => fleet.sentinels.every((s) => s.log().includes('subscribed to')));
  const claimsSerial = await claimRate(fleet.server.base, 1, 1000);
  const claims16 = await claimRate(fleet.server.base, 16, 2000);
  const started = performance.now();
  await fleet.publishAll(N, M, 100, 0);
  await until(`${N} reactions`, () => fleet.reactions().length >= N, 600_000);
  const seconds = (performance.now() - started) / 1000;
  const seen = fleet.reactions();
  const reactionsPerSecond = N / seconds;
  const result = {
    observations: N,
    subjects: M,
    sentinels: 3,
    concurrency_per_sentinel: 8,
    reactions: seen.length,
    distinct: new Set(seen).size,
    seconds: Number(seconds.toFixed(2)),
    reactions_per_s: Number(reactionsPerSecond.toFixed(1)),
    lease_claims_per_s_serial: Number(claimsSerial.toFixed(0)),
    lease_claims_per_s_16_in_flight: Number(claims16.toFixed(0)),
    reactions_per_claim_rate: Number((reactionsPerSecond / claims16).toFixed(4)),
  };
  process.stdout.write(`sentinel throughput (indicative; shared, loaded 2-core machine)\n`);
  for (const [k, v] of Object.entries(result)) process.stdout.write(`  ${k.padEnd(34)} ${v}\n`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await fleet.stop();
}
