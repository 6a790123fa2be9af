// Sentinel throughput: 3 sentinel daemons of one recipe with a no-op target
// (it only appends the seq to a file, which is how reactions are counted)
// react to N observations over M subjects; reactions/s is set beside the raw
// lease-claim rate of the same server measured in the same run (claims of
// distinct subjects, one at a time and 16 in flight). Figures are indicative:
// the machine is shared and loaded. Run: npx tsx bench/sentinels.ts [N] [M]
import { claimRate, startFleet, until } from './lib/sentinel-fleet.ts';

const N = Number(process.argv[2] ?? 300);
const M = Number(process.argv[3] ?? 100);

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
