#!/usr/bin/env node
// A fake Codex CLI: `codex exec --json [...] -`, prompt on stdin, JSON lines
// out as codex-cli 0.171 writes them (thread.started, turn.started,
// item.started/item.completed…, turn.completed). TURNS sets how many items it
// completes (all but the last are commands); SAY puts a word in the last
// message. `codex login status` answers "Not logged in" when FAKE_LOGGED_IN=0.
import { bumpCount, log, parseDirectives, readStdin, sleep } from './directives.mjs';

const argv = process.argv.slice(2);
if (argv[0] === 'login' && argv[1] === 'status') {
  process.stderr.write('WARNING: proceeding, even though we could not create PATH aliases\n');
  if (process.env.FAKE_LOGGED_IN === '0') {
    process.stderr.write('Not logged in\n');
    process.exit(1);
  }
  process.stderr.write('Logged in using an API key - sk-fake***\n');
  process.exit(0);
}
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const prompt = await readStdin();
log(process.env.FAKE_LOG, { agent: 'codex', argv, cwd: process.cwd(), prompt, step: process.env.VIGIL_STEP ?? null });
if (argv[0] !== 'exec' || !argv.includes('--json') || argv[argv.length - 1] !== '-') {
  process.stderr.write('fake codex: expected exec --json … -\n');
  process.exit(2);
}
// codex-cli 0.169 removed --full-auto; clap refuses an unknown argument with exit 2.
if (argv.includes('--full-auto')) {
  process.stderr.write("error: unexpected argument '--full-auto' found\n\nUsage: codex exec [OPTIONS] [PROMPT]\n");
  process.exit(2);
}
if (prompt.includes('connectivity check') && process.env.FAKE_CODEX_CANARY === 'fail') {
  process.stderr.write('error: not logged in; run codex login\n');
  process.exit(1);
}
const d = parseDirectives(prompt.includes('connectivity check') ? '' : prompt);
// COUNT=<file> counts the runs; FAIL_BEFORE=<n> fails the runs before the n-th.
const count = bumpCount(d);
// NO_PROMPT plays codex 0.171 given no prompt: its warning first, then the error, exit 1.
if (d.NO_PROMPT) {
  process.stderr.write('WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir "/tmp"\n');
  process.stderr.write('No prompt provided via stdin.\n');
  process.exit(1);
}
// `codex exec resume … <thread> -` continues that thread; otherwise a new one.
const threadId = argv[1] === 'resume' ? argv[argv.length - 2] : `thread-${process.pid}-${Date.now()}`;
emit({ type: 'thread.started', thread_id: threadId });
// USAGE_LIMIT=now: a new thread stops on the usage limit, as codex says it, resetting this very minute; a resumed one goes on.
if (d.USAGE_LIMIT && argv[1] !== 'resume') {
  const at = new Date().toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit', hour12: true });
  const message = `You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at ${at}.`;
  emit({ type: 'turn.started' });
  emit({ type: 'error', message });
  emit({ type: 'turn.failed', error: { message } });
  process.exit(1);
}
// ROUNDS turns of TURNS completed items each; TRANSIENT adds a retried stream error. SLEEP_MS spreads
// the turns over that time; FAKE_TURN_TOKENS="input,cached,output" is each turn's usage; FAKE_MSG_LOG
// gets a line for the start, each turn's usage (before it is written) and the exit, with times.
const rounds = Number(d.ROUNDS ?? '1');
const items = Number(d.TURNS ?? '1');
const [inTok, cachedTok, outTok] = (process.env.FAKE_TURN_TOKENS ?? '1,0,1').split(',').map(Number);
const msgLog = (entry) => log(process.env.FAKE_MSG_LOG, { pid: process.pid, step: process.env.VIGIL_STEP ?? null, time: Date.now(), ...entry });
msgLog({ event: 'start' });
process.on('exit', (code) => msgLog({ event: 'exit', code }));
for (let round = 1; round <= rounds; round += 1) {
  await sleep(Number(d.SLEEP_MS ?? '0') / rounds);
  emit({ type: 'turn.started' });
  if (d.TRANSIENT && round === 1) emit({ type: 'error', message: 'stream disconnected before completion; retrying 1/5 in 200ms' });
  for (let i = 1; i <= items; i += 1) {
    const last = i === items && round === rounds;
    if (last) emit({ type: 'item.completed', item: { id: `item_${i}`, type: 'agent_message', text: argv.includes('--output-schema') && d.JSON ? d.JSON : d.SAY ? `done ${d.SAY}` : 'done' } });
    else {
      const item = { id: `item_${round}_${i}`, type: 'command_execution', command: `step ${i}` };
      emit({ type: 'item.started', item: { ...item, status: 'in_progress' } });
      emit({ type: 'item.completed', item: { ...item, status: 'completed', exit_code: 0 } });
    }
  }
  if (d.FAIL || (d.FAIL_BEFORE && count < Number(d.FAIL_BEFORE))) {
    emit({ type: 'turn.failed', error: { message: 'fake codex failure' } });
    process.exit(1);
  }
  // codex 0.171 counts cached input inside input_tokens.
  msgLog({ event: 'message', n: round, tokens: inTok + outTok });
  emit({ type: 'turn.completed', usage: { input_tokens: inTok, cached_input_tokens: cachedTok, output_tokens: outTok } });
}
