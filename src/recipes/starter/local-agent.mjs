#!/usr/bin/env node
// A local agent for trying Vigil without a model or an account. It behaves
// like an agent CLI as Vigil's `custom` backend calls one: the prompt arrives
// on stdin (and VIGIL_* variables in the environment), it works in the
// step's directory, prints what it does, and exits 0 when done. It "thinks"
// nothing: each prompt line `run: <command>` is run with /bin/sh, each line
// `say: <text>` is printed as is, and other lines are echoed as notes.
// Replace it with a real agent in vigil.yml (providers.local, or
// default_backend: claude) when you are ready.
import { spawnSync } from 'node:child_process';

if (process.env.VIGIL_CANARY) {
  // Vigil's canary: a one-phase call before a run, to check the backend answers.
  console.log('OK');
  process.exit(0);
}

let prompt = '';
for await (const chunk of process.stdin) prompt += chunk;
const phase = process.env.VIGIL_PHASE ?? '1';
console.log(`local-agent: step ${process.env.VIGIL_STEP ?? '?'}, phase ${phase}, in ${process.cwd()}`);
for (const line of prompt.split('\n')) {
  const text = line.trim();
  if (text === '') continue;
  const run = /^run:\s*(.+)$/.exec(text);
  const say = /^say:\s?(.*)$/.exec(text);
  if (run) {
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
