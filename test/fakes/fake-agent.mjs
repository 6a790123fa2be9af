#!/usr/bin/env node
// A fake custom agent for `providers.<name>: {type: custom, command}`. Run
// once per phase with the step's args and the prompt on stdin; VIGIL_PHASE
// says which phase. It prints SAY's word from phase DONE_AT on (default 1),
// and obeys the other directives of directives.mjs. Logged to $FAKE_LOG.
import { existsSync, readFileSync } from 'node:fs';
import { applyWrites, hang, log, parseDirectives, readStdin, sleep } from './directives.mjs';

const argv = process.argv.slice(2);
const prompt = await readStdin();
const phase = Number(process.env.VIGIL_PHASE ?? '1');
const promptFiles = argv.filter((a) => a.startsWith('/') && existsSync(a));
log(process.env.FAKE_LOG, {
  agent: 'custom',
  argv,
  phase,
  cwd: process.cwd(),
  prompt,
  promptFiles: promptFiles.map((f) => ({ path: f, text: readFileSync(f, 'utf8') })),
  canary: process.env.VIGIL_CANARY ?? null,
  step: process.env.VIGIL_STEP ?? null,
  env: { GREETING: process.env.GREETING ?? null, STEP_ONLY: process.env.STEP_ONLY ?? null },
  settings: { model: process.env.VIGIL_MODEL ?? null, keyword: process.env.VIGIL_COMPLETION_KEYWORD ?? null },
  time: Date.now(),
});

if (process.env.VIGIL_CANARY) {
  if (process.env.FAKE_CANARY === 'fail') {
    process.stderr.write('fake agent: backend unreachable\n');
    process.exit(3);
  }
  if (process.env.FAKE_CANARY === 'slow') await hang({}, '');
  process.stdout.write('OK\n');
  process.exit(0);
}

const d = parseDirectives(prompt);
if (d.SILENT_HANG) await hang(d, '');
if (d.HANG) await hang(d, 'working…\n');
await sleep(Number(d.SLEEP_MS ?? '0'));
process.stdout.write(`phase ${phase}\n`);
applyWrites(d);
if (d.FAIL || (d.FAIL_AT && phase >= Number(d.FAIL_AT))) {
  process.stderr.write('fake agent: failing as asked\n');
  process.exit(Number(d.EXIT ?? '1'));
}
if (d.SAY && phase >= Number(d.DONE_AT ?? '1')) process.stdout.write(`${d.SAY}\n`);
