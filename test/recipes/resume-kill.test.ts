// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} in these strings is vigil's own variable syntax, substituted by the runner
// Issue 45 point 1: `--resume` of a composite run killed with SIGKILL never
// loses finished work. The runner is killed at chosen points — in the middle
// of a step, at a step boundary, in the middle of a merge — chosen by
// readiness: the agent stand-ins (and a git hook, for merges) block on a file
// the test made, and the kill comes once they say they are there. The resumed
// run's end tree must equal an uninterrupted run's, file for file (the same
// git tree).
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { git, makeShProject, rootRun, shRecipe } from './composite-helpers.ts';
import { type Project, runVigil, startVigil } from './helpers.ts';
import { tempDir } from '../support/server-process.ts';
import { untilTrue } from '../support/until.ts';

vi.setConfig({ testTimeout: 300_000 });

let projects: Project[] = [];
afterEach(() => {
  for (const p of projects) p.cleanup();
  projects = [];
});

// Blocks while $GATES/<id>.block exists, after saying it is there; released, it fails (its runner is gone).
const GATE = `#!/bin/sh
[ -e "$GATES/$1.block" ] || exit 0
echo $$ > "$GATES/$1.started"
while [ -e "$GATES/$1.block" ]; do sleep 0.05; done
exit 9
`;
// The same for the n-th merge commit of the repository: the merge is half done while it blocks.
const MERGE_HOOK = `#!/bin/sh
n=$(( $(cat "$GATES/merges" 2>/dev/null || echo 0) + 1 )); echo $n > "$GATES/merges"
[ -e "$GATES/merge-$n.block" ] || exit 0
echo "$$ $PPID" > "$GATES/merge-$n.started"
while [ -e "$GATES/merge-$n.block" ]; do sleep 0.05; done
exit 1
`;

/** A sequence of two steps: `a` writes its file and then may block (mid-step); `b` may block first (a step boundary). */
function workRecipe(project: Project): void {
  project.recipe({
    name: 'work',
    canary: false,
    steps: [
      { label: 'a', args: ['echo "${NAME} a" > ${NAME}-a.txt; "$$GATES/gate" ${NAME}-a || exit 9'] },
      { label: 'b', depends_on: ['a'], args: ['"$$GATES/gate" ${NAME}-b || exit 9; echo "${NAME} b" > ${NAME}-b.txt'] },
    ],
  });
}

const types: Record<string, { setup(p: Project): void; kills: string[] }> = {
  parallel: {
    setup(p) {
      workRecipe(p);
      p.recipe({ name: 'top', type: 'parallel', recipe: 'work', fanout: 2, vars: [{ NAME: 'x' }, { NAME: 'y' }, { NAME: 'z' }] });
    },
    kills: ['y-a', 'merge-2'],
  },
  adversarial: {
    setup(p) {
      workRecipe(p);
      shRecipe(p, 'attack', 'echo "red: nothing breaks"');
      shRecipe(p, 'verdict', '"$$GATES/gate" judge || exit 9; echo \'{"winner": "blue", "reason": "holds", "done": true}\'');
      p.recipe({ name: 'top', type: 'adversarial', rounds: 1, blue: { recipe: 'work', vars: { NAME: 'blue' } }, red: { recipe: 'attack' }, judge: { recipe: 'verdict' } });
    },
    kills: ['judge', 'merge-1'],
  },
  convergent: {
    setup(p) {
      shRecipe(p, 'solve', 'echo "${STRATEGY}" > answer-${STRATEGY}.txt; "$$GATES/gate" solve-${STRATEGY} || exit 9');
      shRecipe(p, 'score', '"$$GATES/gate" score-${STRATEGY} || exit 9; echo "SCORE: ${STRATEGY}"');
      p.recipe({ name: 'top', type: 'convergent', recipe: 'solve', scorer: 'score', strategies: 2 });
    },
    kills: ['solve-2', 'merge-1'],
  },
  // Its middle entry is a parallel run, whose merges a kill can cut short too.
  pipeline: {
    setup(p) {
      workRecipe(p);
      p.recipe({ name: 'fan', type: 'parallel', recipe: 'work', vars: [{ NAME: 'q1' }, { NAME: 'q2' }] });
      p.recipe({ name: 'top', type: 'pipeline', sequences: [{ name: 'work', vars: { NAME: 'p1' } }, { name: 'fan' }, { name: 'work', vars: { NAME: 'p2' } }] });
    },
    kills: ['merge-1', 'p2-a'],
  },
};

function project(type: string): { p: Project; gates: string } {
  const p = makeShProject();
  projects.push(p);
  types[type]!.setup(p);
  const gates = tempDir('vigil-gates-');
  writeFileSync(join(gates, 'gate'), GATE);
  chmodSync(join(gates, 'gate'), 0o755);
  writeFileSync(join(p.root, '.git', 'hooks', 'pre-merge-commit'), MERGE_HOOK);
  chmodSync(join(p.root, '.git', 'hooks', 'pre-merge-commit'), 0o755);
  return { p, gates };
}

/** The tree of the working copy as git would commit it (what the run left, merged or not). */
function endTree(p: Project): string {
  git(p.root, 'add', '-A');
  return git(p.root, 'write-tree').trim();
}

const gone = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
};

/** Runs the recipe, kills the runner -9 once the run reaches `kill`, resumes it; the end tree. */
async function killedAndResumed(type: string, kill: string): Promise<string> {
  const { p, gates } = project(type);
  const block = join(gates, `${kill}.block`);
  writeFileSync(block, '');
  const runner = startVigil(p, ['sequence', 'top', '--merge'], { GATES: gates });
  await untilTrue(`${type}: the run to reach ${kill}`, () => existsSync(join(gates, `${kill}.started`)) || runner.child.exitCode !== null);
  expect(runner.child.exitCode, `${kill}: ${runner.stdout()}${runner.stderr()}`).toBe(null);
  runner.child.kill('SIGKILL');
  await runner.done;
  // A merge cut short: git and its hook die with the runner, as at a power loss.
  const pids = readFileSync(join(gates, `${kill}.started`), 'utf8').trim().split(' ').map(Number);
  if (kill.startsWith('merge-')) for (const pid of pids) process.kill(pid, 'SIGKILL');
  rmSync(block); // a step stand-in left running gives up (the resumed run stops it anyway)
  await untilTrue('the killed processes to be gone', () => pids.every(gone));
  const killed = rootRun(p);

  const resumed = await runVigil(p, ['sequence', 'top', '--merge', '--resume', killed.id], { GATES: gates });
  expect(resumed.code, `${kill}: ${resumed.stdout}${resumed.stderr}`).toBe(0);
  expect(rootRun(p).resumed_from).toBe(killed.id);
  // Nothing of either run is left checked out.
  expect(git(p.root, 'worktree', 'list').trim().split('\n'), kill).toHaveLength(1);
  return endTree(p);
}

describe.each(Object.keys(types))('--resume of a %s run killed with SIGKILL', (type) => {
  it('ends with the tree an uninterrupted run ends with, at every kill point', async () => {
    const whole = project(type);
    const before = git(whole.p.root, 'rev-parse', 'HEAD^{tree}').trim();
    const uninterrupted = runVigil(whole.p, ['sequence', 'top', '--merge'], { GATES: whole.gates });
    // The kill points in their own projects, at the same time as the uninterrupted run.
    const kills = types[type]!.kills;
    const trees = await Promise.all(kills.map((kill) => killedAndResumed(type, kill)));
    const done = await uninterrupted;
    expect(done.code, done.stdout + done.stderr).toBe(0);
    const expected = endTree(whole.p);
    expect(expected, `the uninterrupted run changed nothing:\n${done.stdout}${done.stderr}`).not.toBe(before);
    for (const [i, tree] of trees.entries()) expect(tree, `${type} killed at ${kills[i]}`).toBe(expected);
  });
});
