// What `vigil init` writes: a vigil.yml whose default backend is a local
// agent that needs no model (local-agent.mjs beside this file), and one
// runnable recipe of each of the nine types, small enough to run in seconds
// (the README's quick start runs each). `hello`, `say` and `score` are the
// building blocks the composite recipes name.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface StarterFile {
  /** Relative to the project root. */
  path: string;
  text: string;
  executable?: boolean;
}

export const agentPath = '.vigil/agents/local-agent.mjs';

const vigilYml = `# vigil.yml: this project's settings (docs/recipes.md, "Backends").
# Steps run on the local agent below unless a recipe names another backend:
# it needs no model (it runs the "run:" lines of its prompt). To use Claude
# Code or Codex, set default_backend: claude (or codex).
default_backend: local
providers:
  local:
    type: custom
    command: ${agentPath}
# The server that vigil daemon, sentinels and run records talk to
# (VIGIL_BASE or --base override it):
# server:
#   base: http://127.0.0.1:8130
`;

// What Vigil keeps in .vigil/ for this checkout alone (docs/recipes.md, "What
// Vigil keeps in a project"); recipes, agents, scripts, plugins and ratchet
// rules are the project's and stay visible to git.
const vigilGitignore = `# Written by vigil init: what Vigil keeps here for this checkout alone.
# Run records and logs, the worktrees of running steps:
runs/
worktrees/
# State: triggers and dispatch jobs, the CIR store, the ledger, and locks:
vigil.db
vigil.db-*
cir.db
cir.db-*
ledger.jsonl
*.lock
# Tokens are never written in the project (they live under ~/.vigil); an older
# Vigil wrote this one here, and the next run moves it out:
server-monitors.json
*.tmp
`;

const recipeJson = (value: Record<string, unknown>): string => `${JSON.stringify(value, null, 2)}\n`;
const require = createRequire(import.meta.url);
// Required where used, as vigil.yml's reader does: the build points it at the one vendored copy.
const recipeYaml = (value: Record<string, unknown>): string => (require('yaml') as typeof import('yaml')).stringify(value, { lineWidth: 0 });

const recipes: Record<string, Record<string, unknown>> = {
  hello: {
    name: 'hello',
    type: 'sequence',
    description: 'Two steps on the local agent: write greetings/$WHO.txt, then read it back',
    env: { WHO: 'world' },
    steps: [
      { label: 'write', args: ['run: mkdir -p greetings && echo "hello, $WHO" > greetings/$WHO.txt'] },
      { label: 'read', args: ['run: cat greetings/$WHO.txt\nsay: done with $WHO'] },
    ],
  },
  say: {
    name: 'say',
    type: 'sequence',
    description: 'One step that prints $TEXT (the judge and scorer of the examples)',
    env: { TEXT: 'nothing to say' },
    steps: [{ label: 'say', args: ['say: $TEXT'] }],
  },
  'hello-pipeline': {
    name: 'hello-pipeline',
    type: 'pipeline',
    description: 'hello for two names in order; the last entry runs only if one failed',
    sequences: [
      { name: 'hello', vars: { WHO: 'alice' } },
      { name: 'hello', vars: { WHO: 'bob' } },
      { name: 'say', on: 'failure', vars: { TEXT: 'an entry failed' } },
    ],
  },
  'hello-compound': {
    name: 'hello-compound',
    type: 'compound',
    description: 'Two layers at once, then a third that reads both outputs (LAYER_<NAME>_OUTPUT)',
    layers: [
      { name: 'left', sequence: 'hello', vars: { WHO: 'left' } },
      { name: 'right', sequence: 'hello', depends_on: [], vars: { WHO: 'right' } },
      { name: 'both', sequence: 'say', depends_on: ['left', 'right'], vars: { TEXT: 'left and right are done' } },
    ],
  },
  'hello-parallel': {
    name: 'hello-parallel',
    type: 'parallel',
    description: 'hello once per name, two at a time, each in its own copy of the workspace, then brought together',
    recipe: 'hello',
    fanout: 2,
    vars: [{ WHO: 'ada' }, { WHO: 'grace' }, { WHO: 'linus' }],
  },
  'hello-adversarial': {
    name: 'hello-adversarial',
    type: 'adversarial',
    description: 'Blue writes, red attacks, the judge decides (a verdict JSON); merged when blue wins',
    rounds: 1,
    blue: { recipe: 'hello', vars: { WHO: 'blue' } },
    red: { recipe: 'say', vars: { TEXT: 'red: I found nothing to break' } },
    judge: { recipe: 'say', vars: { TEXT: '{"winner": "blue", "reason": "red found nothing", "done": true}' } },
  },
  'hello-convergent': {
    name: 'hello-convergent',
    type: 'convergent',
    description: 'Two strategies of hello, each scored by the score recipe (SCORE: n); the best is merged',
    recipe: 'hello',
    scorer: 'score',
    strategies: 2,
  },
  score: {
    name: 'score',
    type: 'sequence',
    description: "The convergent example's scorer: SCORE is the number of greetings in the candidate",
    steps: [{ label: 'count', args: ['run: ls "$CANDIDATE_DIR/greetings" | wc -l | sed "s/^ */SCORE: /"'] }],
  },
  'hello-substrate': {
    name: 'hello-substrate',
    type: 'substrate',
    description: 'A step that reads its CIR context and writes a finding back (vigil cir query)',
    cir: { write_after_step: true, detect_patterns_on_complete: true },
    steps: [{ label: 'review', args: ['run: wc -c < "$$CIR_CONTEXT"\nsay: SIGNAL finding: the quick start ran'] }],
  },
  'hello-nightly': {
    name: 'hello-nightly',
    type: 'temporal',
    description: 'hello every night at 03:00 under vigil daemon; vigil temporal fire hello-nightly runs it now',
    schedule: '0 3 * * *',
    mode: 'recipe',
    target: 'hello',
    vars: { WHO: 'night' },
    notify: 'never',
  },
  'hello-sentinel': {
    name: 'hello-sentinel',
    type: 'sentinel',
    description: 'Under vigil daemon: for each ci.build.failed on monitor builds, runs a command once',
    watch: { monitor: 'builds', token: 'vault:builds-owner-token', filter: { types: ['ci.build.failed'] } },
    mode: 'command',
    target: 'echo "reacted to $OBSERVATION_TYPE on $OBSERVATION_SUBJECT" >> sentinel-reactions.txt',
    notify: 'never',
  },
};

function agentText(): string {
  return readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'local-agent.mjs'), 'utf8');
}

/** The files `vigil init` writes; with `yaml`, the recipes as .yml (they load the same). */
export function starterFiles(options: { yaml?: boolean } = {}): StarterFile[] {
  const [ext, text] = options.yaml ? ['yml', recipeYaml] : ['json', recipeJson];
  return [
    { path: 'vigil.yml', text: vigilYml },
    { path: '.vigil/.gitignore', text: vigilGitignore },
    { path: agentPath, text: agentText(), executable: true },
    ...Object.entries(recipes).map(([name, value]) => ({ path: `.vigil/recipes/${name}.${ext}`, text: text(value) })),
  ];
}
