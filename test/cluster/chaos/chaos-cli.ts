// `npm run chaos [-- --minutes 3 --pause 15 --timeout 3]`: the fault-injection
// run for minutes (rounds of kill -9, SIGSTOP/SIGCONT, pg_terminate_backend,
// SIGTERM restarts of one node and of all at once, and restarts of a
// PostgreSQL server the run starts itself, in random order, on three nodes
// under mixed load, with clients that give up after --timeout seconds and
// try another node); prints each round, the totals and every violation;
// exits 1 on any violation.
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pgInstanceUnavailable } from '../../support/pg-instance.ts';
import { postgresUnavailable } from '../../support/postgres.ts';
import { tempDirs } from '../../support/server-process.ts';
import { type Fault, faults, runChaos } from './chaos.ts';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '3' }, pause: { type: 'string', default: '15' }, timeout: { type: 'string', default: '3' } } });
const minutes = Number(values.minutes);
const pauseSeconds = Number(values.pause);
const timeoutSeconds = Number(values.timeout);
if (!(minutes > 0 && minutes <= 120) || !(pauseSeconds > 0 && pauseSeconds <= 60) || !(timeoutSeconds > 0 && timeoutSeconds <= 60)) {
  console.error('vigil chaos: --minutes must be between 0 and 120, --pause and --timeout (seconds) between 0 and 60');
  process.exit(2);
}
const ownServer = pgInstanceUnavailable();
if (ownServer) {
  console.error(`vigil chaos: cannot start a PostgreSQL server of its own: ${ownServer}`);
  process.exit(2);
}
const unavailable = await postgresUnavailable();
if (unavailable) {
  console.error(`vigil chaos: needs PostgreSQL: ${unavailable}`);
  process.exit(2);
}
// About one fault per 20 s (a pause takes its own length on top); each kind as often as the others.
const kinds: readonly Fault[] = faults;
const count = Math.max(kinds.length, Math.round((minutes * 60) / (20 + pauseSeconds / kinds.length)));
const rounds: Fault[] = Array.from({ length: count }, (_, i) => kinds[i % kinds.length]!).sort(() => Math.random() - 0.5);
console.log(`vigil chaos: ${count} rounds on three nodes (${kinds.join(', ')}), pauses of ${pauseSeconds} s, clients giving up after ${timeoutSeconds} s`);
try {
  const result = await runChaos({ rounds, pauseMs: pauseSeconds * 1000, timeoutMs: timeoutSeconds * 1000, log: (line) => console.log(line) });
  console.log(JSON.stringify(result.stats, null, 2));
  if (result.violations.length === 0) console.log('vigil chaos: no violation');
  else {
    console.log(`vigil chaos: ${result.violations.length} violation(s):`);
    for (const v of result.violations) console.log(`- ${v}`);
  }
  process.exitCode = result.violations.length === 0 ? 0 : 1;
} finally {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}
