#!/usr/bin/env node
// A fake Claude Code CLI: `claude -p --output-format stream-json --verbose
// --max-turns N [--model M] [--permission-mode P]`, prompt on stdin. It
// speaks stream-json (system init, one assistant event per turn, a result
// event) and obeys directives in the prompt (see directives.mjs). Every
// invocation is logged to $FAKE_LOG when set.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { applyWrites, bumpCount, hang, log, parseDirectives, readStdin, sleep } from './directives.mjs';

const argv = process.argv.slice(2);
const flag = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

// `claude auth status`: logged in unless FAKE_LOGGED_IN=0 (an ANTHROPIC_API_KEY counts, as for the real one).
if (argv[0] === 'auth' && argv[1] === 'status') {
  const key = process.env.ANTHROPIC_API_KEY;
  const loggedIn = process.env.FAKE_LOGGED_IN !== '0' || Boolean(key);
  process.stdout.write(`${JSON.stringify({ loggedIn, authMethod: key ? 'api_key' : loggedIn ? 'claude.ai' : 'none', apiProvider: 'firstParty' }, null, 2)}\n`);
  process.exit(loggedIn ? 0 : 1);
}
if (argv.includes('--help')) {
  // FAKE_CLAUDE_EFFORT=1 plays a Claude Code recent enough to take --effort.
  process.stdout.write(`Usage: claude [options] [prompt]\n  --model <model>\n${process.env.FAKE_CLAUDE_EFFORT === '1' ? '  --effort <level>  low, medium, high, max\n' : ''}`);
  process.exit(0);
}
const prompt = await readStdin();
log(process.env.FAKE_LOG, {
  agent: 'claude',
  argv,
  cwd: process.cwd(),
  prompt,
  thinking: process.env.MAX_THINKING_TOKENS ?? null,
  auth: process.env.FAKE_AUTH_TOKEN ?? null,
  sandbox: process.env.IS_SANDBOX ?? null,
  step: process.env.VIGIL_STEP ?? null,
  time: Date.now(),
});

if (!argv.includes('-p') || flag('--output-format') !== 'stream-json') {
  process.stderr.write('fake claude: expected -p --output-format stream-json\n');
  process.exit(2);
}

// FAKE_ROOT=1 plays claude run by root: bypassPermissions is refused unless IS_SANDBOX=1.
if (process.env.FAKE_ROOT === '1' && flag('--permission-mode') === 'bypassPermissions' && process.env.IS_SANDBOX !== '1') {
  process.stderr.write('--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n');
  process.exit(1);
}
const canary = prompt.includes('connectivity check');
if (canary && process.env.FAKE_CANARY === 'fail') {
  process.stderr.write('fake claude: not logged in\n');
  process.exit(1);
}
if (canary && process.env.FAKE_CANARY === 'slow') await hang({}, '');

// Without credentials Claude Code 2.1 answers with one synthetic turn and an is_error result of subtype "success".
if (process.env.FAKE_LOGGED_IN === '0' && !process.env.ANTHROPIC_API_KEY) {
  emit({ type: 'system', subtype: 'init', session_id: 'fake', apiKeySource: 'none' });
  emit({ type: 'assistant', message: { id: 'm0', model: '<synthetic>', content: [{ type: 'text', text: 'Not logged in · Please run /login' }] }, error: 'authentication_failed' });
  emit({ type: 'result', subtype: 'success', is_error: true, num_turns: 1, result: 'Not logged in · Please run /login', total_cost_usd: 0, usage: { input_tokens: 0, output_tokens: 0 } });
  process.exit(1);
}
const d = parseDirectives(canary ? '' : prompt);
// A session of its own, or the one --resume names (as Claude Code continues it).
const sessionId = flag('--resume') ?? randomUUID();
emit({ type: 'system', subtype: 'init', session_id: sessionId, model: flag('--model') ?? 'fake-model' });
// USAGE_LIMIT=<s>: a new session stops on the usage limit, resetting s seconds from now (as Claude Code prints it); a resumed one goes on.
if (d.USAGE_LIMIT && !flag('--resume')) {
  const message = `Claude AI usage limit reached|${Math.ceil(Date.now() / 1000 + Number(d.USAGE_LIMIT))}`;
  emit({ type: 'assistant', message: { id: 'msg_limit', content: [{ type: 'text', text: message }], usage: { input_tokens: 3, output_tokens: 1 } } });
  emit({ type: 'result', subtype: 'success', is_error: true, num_turns: 1, result: message, session_id: sessionId, total_cost_usd: 0, usage: { input_tokens: 3, output_tokens: 1 } });
  process.exit(1);
}
const count = bumpCount(d);
if (d.SILENT_HANG) await hang(d, '');
if (d.HANG) await hang(d, `${JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'working…' }] } })}\n`);

const maxTurns = Number(flag('--max-turns') ?? '10');
const turns = Number(d.TURNS ?? '1');
const perTurn = Number(d.SLEEP_MS ?? '0') / turns;
// FAKE_MSG_TOKENS="input,output,cache_creation,cache_read" per message (default 10 input, 5 output), as
// Claude Code 2.1 reports a message's usage; FAKE_MSG_LOG gets a line for the start, each message (before
// it is written) and the exit, with times: what a test reads the overshoot of a budget from.
const [inTok, outTok, ccTok, crTok] = (process.env.FAKE_MSG_TOKENS ?? '10,5,0,0').split(',').map(Number);
const model = flag('--model') ?? 'claude-fake-1';
const msgLog = (entry) => log(process.env.FAKE_MSG_LOG, { pid: process.pid, step: process.env.VIGIL_STEP ?? null, canary, time: Date.now(), ...entry });
msgLog({ event: 'start' });
process.on('exit', (code) => msgLog({ event: 'exit', code }));
const messageUsage = { input_tokens: inTok, output_tokens: outTok, cache_creation_input_tokens: ccTok ?? 0, cache_read_input_tokens: crTok ?? 0, service_tier: 'standard' };
const tokensPerMessage = inTok + outTok + (ccTok ?? 0) + (crTok ?? 0);
let sent = 0;
for (let t = 1; t <= Math.min(turns, maxTurns); t += 1) {
  await sleep(perTurn);
  const last = t === turns;
  const text = last && d.SAY ? `turn ${t} done. ${d.SAY}` : `turn ${t}`;
  msgLog({ event: 'message', n: t, tokens: tokensPerMessage });
  sent += 1;
  // As Claude Code writes a turn: each content block an event of its own, under one message id, its usage repeated.
  emit({ type: 'assistant', message: { id: `msg_${t}`, model, content: [{ type: 'text', text }], usage: messageUsage } });
  if (!last) emit({ type: 'assistant', message: { id: `msg_${t}`, model, content: [{ type: 'tool_use', name: 'Bash' }], usage: messageUsage } });
  // FAKE_FAIL_FILE: while that file exists, the agent (of step FAKE_FAIL_STEP, if set) fails after its first message (an API error).
  // (or whose prompt says FAIL_IF_FILE, when FAKE_FAIL_STEP is "prompt")
  const failing =
    !process.env.FAKE_FAIL_STEP || process.env.FAKE_FAIL_STEP === process.env.VIGIL_STEP || (process.env.FAKE_FAIL_STEP === 'prompt' && prompt.includes('FAIL_IF_FILE'));
  if (!canary && failing && process.env.FAKE_FAIL_FILE && existsSync(process.env.FAKE_FAIL_FILE)) {
    emit({ type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: t, result: 'API Error: 500', total_cost_usd: Number(process.env.FAKE_COST ?? '0'), usage: { input_tokens: inTok * t, output_tokens: outTok * t, cache_creation_input_tokens: (ccTok ?? 0) * t, cache_read_input_tokens: (crTok ?? 0) * t } });
    process.exit(1);
  }
}
applyWrites(d);
if (turns > maxTurns) {
  emit({ type: 'result', subtype: 'error_max_turns', is_error: true, num_turns: maxTurns, result: '' });
  process.exit(1);
}
// FAIL_BEFORE=<n>: runs before the n-th (counted with COUNT) fail.
if (d.FAIL || (d.FAIL_BEFORE && count < Number(d.FAIL_BEFORE))) {
  emit({ type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: turns, result: 'fake failure' });
  process.exit(1);
}
// Usage as Claude Code reports it (FAKE_COST dollars per run, 10 input and 5 output tokens per turn).
emit({
  type: 'result',
  subtype: 'success',
  is_error: false,
  num_turns: turns,
  // ECHO repeats the prompt; LINE is a line of its own from run LINE_AT on (counted with COUNT).
  result: [d.ECHO ? prompt.trim() : null, d.SAY ? `all done ${d.SAY}` : 'all done', d.LINE && count >= Number(d.LINE_AT ?? '1') ? d.LINE : null].filter((l) => l !== null).join('\n'),
  session_id: sessionId,
  // With --json-schema, Claude Code returns the answer as structured_output.
  ...(flag('--json-schema') && d.JSON ? { structured_output: JSON.parse(d.JSON) } : {}),
  total_cost_usd: Number(process.env.FAKE_COST ?? '0'),
  usage: { input_tokens: inTok * sent, output_tokens: outTok * sent, cache_creation_input_tokens: (ccTok ?? 0) * sent, cache_read_input_tokens: (crTok ?? 0) * sent },
});
