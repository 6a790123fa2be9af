#!/usr/bin/env node
// A local agent for trying Vigil without a model or an account. It behaves
// like an agent CLI as Vigil's `custom` backend calls one: the prompt arrives
// on stdin (and VIGIL_* variables in the environment), it works in the
// step's directory, prints what it does, and exits 0 when done. It "thinks"
// nothing: each prompt line `run: <command>` is run with /bin/sh, each line
// `say: <text>` is printed as is, and other lines are echoed as notes.
// It runs only the `run:` lines written in the recipe itself: Vigil lists
// them in VIGIL_RUN_LINES (after the guard read them), and a `run:` line
// that arrived through a variable or an earlier step's output is printed as
// a note, never run.
// Replace it with a real agent in vigil.yml (providers.local, or
// default_backend: claude) when you are ready.
import { spawnSync } from 'node:child_process';

if (process.env.VIGIL_CANARY) {
  // Vigil's canary: a one-phase call before a run, to check the backend answers.
  console.log('OK');
  process.exit(0);
}

/** The commands Vigil says the recipe wrote, each runnable as many times as it was written. */
function allowedCommands() {
  try {
    const listed = JSON.parse(process.env.VIGIL_RUN_LINES ?? '[]');
    return Array.isArray(listed) ? listed.filter((c) => typeof c === 'string') : [];
  } catch {
    return [];
  }
}

let prompt = '';
for await (const chunk of process.stdin) prompt += chunk;
const phase = process.env.VIGIL_PHASE ?? '1';
const allowed = allowedCommands();
console.log(`local-agent: step ${process.env.VIGIL_STEP ?? '?'}, phase ${phase}, in ${process.cwd()}`);
for (const line of prompt.split('\n')) {
  const text = line.trim();
  if (text === '') continue;
  const run = /^run:\s*(.+)$/.exec(text);
  const say = /^say:\s?(.*)$/.exec(text);
  if (run) {
    const at = allowed.indexOf(run[1]);
    if (at < 0) {
      console.log(`local-agent: not running "${run[1]}": it is not a run: line of the recipe (Vigil did not list it in VIGIL_RUN_LINES)`);
      continue;
    }
    allowed.splice(at, 1);
    console.log(`local-agent: $ ${run[1]}`);
    const result = spawnSync('/bin/sh', ['-c', run[1]], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0) {
      console.log(`local-agent: the command exited ${result.status ?? result.signal}; giving up`);
      process.exit(1);
    }
  } else if (say) console.log(say[1]);
  else console.log(`local-agent: (note) ${text}`);
}
if (process.env.VIGIL_COMPLETION_KEYWORD) console.log(process.env.VIGIL_COMPLETION_KEYWORD);
