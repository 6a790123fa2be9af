#!/usr/bin/env node
// An agent stand-in for the concurrency and fencing tests, answering as
// `claude -p --output-format stream-json` does: it logs its start and its
// exit with times (and its pid, run, step and lease) to $SLOT_LOG, stays
// $SLOT_AGENT_MS ms (default 300), or until the file $SLOT_AGENT_UNTIL
// exists, then reports success. SIGTERM is logged as
// an exit too, so a killed agent's end is in the log.
import { appendFileSync, existsSync } from 'node:fs';

const logFile = process.env.SLOT_LOG;
const base = { pid: process.pid, run: process.env.VIGIL_RUN_ID ?? null, step: process.env.VIGIL_STEP ?? null, runner: process.env.SLOT_RUNNER ?? null };
const log = (event, extra = {}) => logFile && appendFileSync(logFile, `${JSON.stringify({ event, time: Date.now(), ...base, ...extra })}\n`);
const argv = process.argv.slice(2);
if (argv.includes('--help')) process.exit(0);
if (argv[0] === 'auth') {
  process.stdout.write('{"loggedIn": true}\n');
  process.exit(0);
}
let prompt = '';
for await (const chunk of process.stdin) prompt += chunk;
if (prompt.includes('connectivity check')) {
  process.stdout.write(`${JSON.stringify({ type: 'result', subtype: 'success', is_error: false, num_turns: 1, result: 'ok' })}\n`);
  process.exit(0);
}
log('start', { fence: process.env.VIGIL_LEASE_FENCE ?? null, subject: process.env.VIGIL_LEASE_SUBJECT ?? null });
process.on('SIGTERM', () => {
  log('exit', { signal: 'SIGTERM' });
  process.exit(143);
});
const ms = Number(process.env.SLOT_AGENT_MS ?? '300');
process.stdout.write(`${JSON.stringify({ type: 'system', subtype: 'init', session_id: 'slot' })}\n`);
if (process.env.SLOT_AGENT_UNTIL) while (!existsSync(process.env.SLOT_AGENT_UNTIL)) await new Promise((r) => setTimeout(r, 50));
else await new Promise((r) => setTimeout(r, ms));
process.stdout.write(`${JSON.stringify({ type: 'result', subtype: 'success', is_error: false, num_turns: 1, result: 'done', total_cost_usd: 0, usage: { input_tokens: 1, output_tokens: 1 } })}\n`);
log('exit');
