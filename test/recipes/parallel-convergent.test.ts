// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} in these strings is vigil's own variable syntax, substituted by the runner
// parallel and convergent recipes end to end: real git worktrees per child,
// ordered merge-back, merge conflicts, fail_fast, scoring and the winner.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { childRuns, git, interruptedRun, makeShProject, outputOf, rootRun, shRecipe } from './composite-helpers.ts';
import { type Project, runVigil } from './helpers.ts';

// Each test runs many real processes (a loaded machine makes that slow).
vi.setConfig({ testTimeout: 180_000 });

let project: Project;
afterEach(() => project?.cleanup());

describe('parallel', () => {
  it("cancelled after a child succeeded: keeps that child's work committed on its branch, and says where", async () => {
    project = makeShProject();
    // Child a writes its file and ends; child b works until the run is cancelled.
    shRecipe(project, 'one', 'if [ "${NAME}" = a ]; then echo a > out-a.txt; else while :; do sleep 0.1; done; fi');
    project.recipe({ name: 'fan', type: 'parallel', recipe: 'one', vars: [{ NAME: 'a' }, { NAME: 'b' }] });
    const r = await interruptedRun(project, 'fan', /child 0: succeeded/);
    expect(r.code, r.stderr + r.stdout).toBe(130);
    const root = rootRun(project);
    const branch = `vigil/${root.id}-0`;
    expect(r.stdout).toContain(`child 0 succeeded but was not merged (the run was cancelled by SIGINT): its work is kept on branch ${branch} (git merge --no-ff ${branch})`);
    // Its work is on the branch: the copy was once removed uncommitted, leaving the branch empty.
    expect(git(project.root, 'show', `${branch}:out-a.txt`)).toBe('a\n');
    expect(root.children!.find((c) => c.role === 'child 0')!.result).toMatchObject({ merge: 'not merged: the run was cancelled by SIGINT', branch });
    // The cancelled child kept nothing, and no copy is left.
    expect(git(project.root, 'branch', '--list', `vigil/${root.id}-1`)).toBe('');
    expect(git(project.root, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    // Resumed, with b able to finish: a is reused, and its work is in the results.
    shRecipe(project, 'one', 'echo ${NAME} > out-${NAME}.txt');
    const resumed = await runVigil(project, ['sequence', 'fan', '--resume', root.id]);
    expect(resumed.code, resumed.stderr + resumed.stdout).toBe(0);
    const again = rootRun(project);
    expect(again.children!.find((c) => c.role === 'child 0')!.run_id).toBe(root.children!.find((c) => c.role === 'child 0')!.run_id);
    expect(git(project.root, 'show', `vigil/${again.id}:out-a.txt`)).toBe('a\n');
    expect(git(project.root, 'show', `vigil/${again.id}:out-b.txt`)).toBe('b\n');
  });

  it('runs one child per variable set in its own worktree and merges them back in index order', async () => {
    project = makeShProject();
    shRecipe(project, 'one', 'echo "${NAME} ${PARALLEL_INDEX}/${PARALLEL_COUNT} $$(git branch --show-current)" > out-${NAME}.txt; echo made ${NAME}');
    project.recipe({ name: 'fan', type: 'parallel', recipe: 'one', fanout: 2, vars: [{ NAME: 'a' }, { NAME: 'b' }, { NAME: 'c' }] });
    const r = await runVigil(project, ['sequence', 'fan', '--merge']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = rootRun(project);
    expect(run.status).toBe('succeeded');
    expect(r.stdout).toContain(`merged the results (branch vigil/${run.id}) into main as one merge commit`);
    expect(run.children!.map((c) => [c.role, c.status, c.vars.NAME])).toEqual([
      ['child 0', 'succeeded', 'a'],
      ['child 1', 'succeeded', 'b'],
      ['child 2', 'succeeded', 'c'],
    ]);
    for (const [i, name] of ['a', 'b', 'c'].entries()) {
      const text = readFileSync(join(project.root, `out-${name}.txt`), 'utf8');
      expect(text).toBe(`${name} ${i}/3 vigil/${run.id}-${i}\n`);
    }
    for (const child of childRuns(project, run)) expect(child.parent).toBe(run.id);
    // On the checked-out branch: one merge commit of the run's branch, on which the children were
    // merged one at a time, in index order, each commit saying which recipe, child and variables made it.
    expect(git(project.root, 'log', '--first-parent', '--format=%s').trim().split('\n')).toEqual([`vigil ${run.id}: parallel recipe "fan"`, 'init']);
    const merges = git(project.root, 'log', '--format=%s', '--merges', 'HEAD^2').trim().split('\n').reverse();
    expect(merges).toEqual(['a', 'b', 'c'].map((n, i) => `vigil ${run.id}: parallel recipe "fan": merge child ${i}: recipe "one" with NAME=${n}`));
    expect(git(project.root, 'log', '--format=%s', '--no-merges', '-1', 'HEAD^2^2')).toBe(`vigil ${run.id}: parallel recipe "fan", child 2: recipe "one" with NAME=c\n`);
    expect(git(project.root, 'status', '--porcelain')).toBe('');
    expect(git(project.root, 'branch', '--list', 'vigil/*')).toBe('');
    expect(git(project.root, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    expect(outputOf(project, run)).toMatch(/^child 0\tsucceeded\tNAME=a/m);
    const tree = await runVigil(project, ['runs', run.id]);
    expect(tree.stdout).toMatch(/child 2: run \S+ {2}sequence "one" {2}succeeded/);
    expect(tree.stdout).toContain(`results: merged the results (branch vigil/${run.id}) into main as one merge commit`);
  });

  it('does not merge into a working tree that had uncommitted changes at the start, even with --merge', async () => {
    project = makeShProject();
    shRecipe(project, 'one', 'echo ${NAME} > out-${NAME}.txt');
    project.recipe({ name: 'fan', type: 'parallel', recipe: 'one', merge: true, vars: [{ NAME: 'a' }] });
    project.file('README.md', 'my own edit\n');
    const r = await runVigil(project, ['sequence', 'fan', '--merge']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = rootRun(project);
    expect(r.stdout).toContain(
      `the results are on branch vigil/${run.id}, not merged: the working tree had uncommitted changes when the run started; merge it with: git merge --no-ff vigil/${run.id}`,
    );
    // Said at the start too, before the children run, naming what is uncommitted.
    const early = r.stdout.indexOf(`the results will stay on branch vigil/${run.id}, not merged: the working tree has uncommitted changes (README.md); commit or stash them before the run to have it merge`);
    expect(early, r.stdout).toBeGreaterThan(-1);
    expect(early).toBeLessThan(r.stdout.indexOf('child 0'));
    expect(git(project.root, 'log', '--format=%s', 'main')).toBe('init\n');
    expect(git(project.root, 'status', '--porcelain')).toBe(' M README.md\n');
    expect(git(project.root, 'show', `vigil/${run.id}:out-a.txt`)).toBe('a\n');
  });

  it('inside a pipeline, hands its results to the shared working tree uncommitted, byte for byte, for the entries after it', async () => {
    project = makeShProject();
    // A Latin-1 file (0xE9 is no UTF-8) once reached the working tree with U+FFFD in its place.
    shRecipe(project, 'one', 'echo ${NAME} > out-${NAME}.txt; printf "caf\\351 ${NAME}\\n" > latin-${NAME}.txt');
    shRecipe(project, 'gather', 'cat out-a.txt out-b.txt > all.txt');
    project.recipe({ name: 'fan', type: 'parallel', recipe: 'one', vars: [{ NAME: 'a' }, { NAME: 'b' }] });
    project.recipe({ name: 'line', type: 'pipeline', sequences: [{ name: 'fan' }, { name: 'gather' }] });
    const r = await runVigil(project, ['sequence', 'line']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const fan = childRuns(project, rootRun(project))[0]!;
    expect(r.stdout).toContain(`brought the results (branch vigil/${fan.id}) into the working tree, uncommitted, for the entries after this one`);
    expect(readFileSync(join(project.root, 'all.txt'), 'utf8')).toBe('a\nb\n');
    expect(readFileSync(join(project.root, 'latin-b.txt'))).toEqual(Buffer.from('caf\xe9 b\n', 'latin1'));
    expect(git(project.root, 'log', '--format=%s')).toBe('init\n');
    expect(git(project.root, 'status', '--porcelain')).toBe('?? all.txt\n?? latin-a.txt\n?? latin-b.txt\n?? out-a.txt\n?? out-b.txt\n');
    expect(git(project.root, 'branch', '--list', 'vigil/*')).toBe('');
  });

  it('aborts a conflicting merge, marks that child conflict, keeps its branch and fails the run', async () => {
    project = makeShProject();
    shRecipe(project, 'edit', 'echo "${NAME}" > README.md');
    project.recipe({ name: 'clash', type: 'parallel', recipe: 'edit', vars: [{ NAME: 'first' }, { NAME: 'second' }] });
    const r = await runVigil(project, ['sequence', 'clash']);
    expect(r.code).toBe(1);
    const run = rootRun(project);
    expect(run.status).toBe('failed');
    expect(run.children![0]!.status).toBe('succeeded');
    expect(run.children![1]!.status).toBe('conflict');
    expect(run.children![1]!.result).toMatchObject({ merge: 'conflict', branch: `vigil/${run.id}-1` });
    // The conflict names its branch on the console; what merged is on the run's branch, the checked-out one untouched.
    expect(r.stdout).toContain(`child 1: merging its work conflicts: conflicts in README.md; the step's work is kept on branch vigil/${run.id}-1`);
    expect(r.stdout).toContain(`what the run brought together before it ended is on branch vigil/${run.id}`);
    expect(readFileSync(join(project.root, 'README.md'), 'utf8')).toBe('base\n');
    expect(git(project.root, 'show', `vigil/${run.id}:README.md`)).toBe('first\n');
    expect(git(project.root, 'branch', '--list', `vigil/${run.id}-1`)).toContain(`vigil/${run.id}-1`);
    expect(git(project.root, 'log', '--format=%s', 'main')).toBe('init\n');
    expect(git(project.root, 'status', '--porcelain').trim()).toBe('');
    expect(run.reason).toContain('child 1 conflict');
  });

  it('fail_fast cancels the other children at the first failure', async () => {
    project = makeShProject();
    shRecipe(project, 'maybe', 'if [ "${PARALLEL_INDEX}" = 0 ]; then exit 3; fi; sleep 30');
    project.recipe({ name: 'ff', type: 'parallel', recipe: 'maybe', fanout: 2, fail_fast: true, vars: [{ A: '0' }, { A: '1' }, { A: '2' }, { A: '3' }] });
    const r = await runVigil(project, ['sequence', 'ff']);
    expect(r.code).toBe(1);
    const run = rootRun(project);
    expect(run.children!.map((c) => c.status)).toEqual(['failed', 'cancelled', 'cancelled', 'cancelled']);
    expect(run.children!.slice(2).map((c) => c.reason)).toEqual(['not started: fail_fast after a failure', 'not started: fail_fast after a failure']);
    for (const child of childRuns(project, run)) expect(child.status).not.toBe('running');
  });

  it('uses a mirror copy per child when the workspace is not a git repository', async () => {
    project = makeShProject({ git: false });
    shRecipe(project, 'one', 'echo ${NAME} > got-${NAME}.txt; test ! -e got-other.txt');
    project.recipe({ name: 'fan', type: 'parallel', recipe: 'one', vars: [{ NAME: 'x' }, { NAME: 'y' }] });
    const r = await runVigil(project, ['sequence', 'fan']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(project.root, 'got-x.txt'), 'utf8')).toBe('x\n');
    expect(readFileSync(join(project.root, 'got-y.txt'), 'utf8')).toBe('y\n');
  });
});

describe('parallel in a folder its git repository does not track', () => {
  // As `mkdir try-vigil && cd try-vigil && vigil init` inside a clone: HEAD holds nothing of the folder to start a worktree from.
  it('copies the folder for each child and brings the work back into it, as outside git, and its plan says so', async () => {
    project = makeShProject();
    project.file('try/.keep', '');
    shRecipe(project, 'one', 'echo ${NAME} > got-${NAME}.txt; test ! -e got-other.txt', { workspace: 'try' });
    project.recipe({ name: 'fan', type: 'parallel', recipe: 'one', workspace: 'try', vars: [{ NAME: 'x' }, { NAME: 'y' }] });
    const plan = await runVigil(project, ['sequence', 'fan', '--dry-run']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).not.toMatch(/worktree/);
    const r = await runVigil(project, ['sequence', 'fan']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(project.root, 'try', 'got-x.txt'), 'utf8')).toBe('x\n');
    expect(readFileSync(join(project.root, 'try', 'got-y.txt'), 'utf8')).toBe('y\n');
    // It changed the folder: no word of a results branch that "changed nothing".
    expect(r.stdout + r.stderr).not.toMatch(/changed nothing|branch vigil\//);
    expect(git(project.root, 'branch', '--list', 'vigil/*')).toBe('');
    expect(git(project.root, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
  });
});

describe('convergent', () => {
  /** A project whose race runs `solve` per strategy (it writes answer.txt) and scores each copy by that answer. */
  function race(solve: string, extra: Record<string, unknown> = {}, score = 'echo "SCORE: $$(cat ${CANDIDATE_DIR}/answer.txt)"'): void {
    project = makeShProject();
    shRecipe(project, 'solve', solve);
    shRecipe(project, 'score', score);
    project.recipe({ name: 'race', type: 'convergent', recipe: 'solve', scorer: 'score', strategies: 2, ...extra });
  }

  it('scores every strategy in its own copy and merges the best one back', async () => {
    // Strategy 2 writes the best answer; the scorer reads it from CANDIDATE_DIR.
    race('echo $$(( ${STRATEGY} * (4 - ${STRATEGY}) )) > answer.txt', { strategies: 3, merge: true }, 'echo "looked at ${CANDIDATE_DIR}"; echo "SCORE: $$(cat ${CANDIDATE_DIR}/answer.txt)"');
    const r = await runVigil(project, ['sequence', 'race']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = rootRun(project);
    expect(readFileSync(join(project.root, 'answer.txt'), 'utf8')).toBe('4\n');
    expect(git(project.root, 'log', '-1', '--format=%s')).toBe(`vigil ${run.id}: convergent recipe "race"\n`);
    expect(outputOf(project, run)).toContain('winner: strategy 2 (score 4)');
    const s2 = run.children!.find((c) => c.role === 'strategy 2')!;
    expect(s2.result).toMatchObject({ score: 4, winner: true, merge: 'merged' });
    expect(git(project.root, 'branch', '--list', 'vigil/*').trim()).toBe('');
    expect(existsSync(join(project.root, '.vigil', 'worktrees', run.id, 'strategy-1'))).toBe(false);
  });

  it("with keep_candidates, keeps each losing strategy's work committed on its branch", async () => {
    race('echo ${STRATEGY} > answer.txt', { keep_candidates: true });
    const r = await runVigil(project, ['sequence', 'race']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = rootRun(project);
    expect(outputOf(project, run)).toContain('winner: strategy 2 (score 2)');
    // The loser's branch holds what it wrote (it was once kept with nothing on it: the copy was never committed).
    const kept = git(project.root, 'branch', '--list', `vigil/${run.id}-*`).trim();
    expect(kept).toMatch(new RegExp(`^vigil/${run.id}-\\S*1$`));
    expect(git(project.root, 'show', `${kept}:answer.txt`)).toBe('1\n');
    expect(git(project.root, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
  });

  it('cancelled after a strategy succeeded: keeps its work on its branch, and --resume scores it from there', async () => {
    // Strategy 1 answers at once; strategy 2 works until the run is cancelled.
    race('if [ ${STRATEGY} = 1 ]; then echo 7 > answer.txt; else while :; do sleep 0.1; done; fi');
    const r = await interruptedRun(project, 'race', /strategy 1: succeeded/);
    expect(r.code, r.stderr + r.stdout).toBe(130);
    const root = rootRun(project);
    const branch = `vigil/${root.id}-strategy-1`;
    expect(r.stdout).toContain(`strategy 1 succeeded but was not merged (the run was cancelled by SIGINT): its work is kept on branch ${branch} (git merge --no-ff ${branch})`);
    expect(git(project.root, 'show', `${branch}:answer.txt`)).toBe('7\n');
    // Resumed with a strategy 2 that answers: strategy 1 is reused, and scored on its own work.
    shRecipe(project, 'solve', 'echo ${STRATEGY} > answer.txt');
    const resumed = await runVigil(project, ['sequence', 'race', '--resume', root.id]);
    expect(resumed.code, resumed.stderr + resumed.stdout).toBe(0);
    const again = rootRun(project);
    expect(again.children!.find((c) => c.role === 'strategy 1')!.run_id).toBe(root.children!.find((c) => c.role === 'strategy 1')!.run_id);
    expect(outputOf(project, again)).toContain('winner: strategy 1 (score 7)');
  });

  it('fails when no candidate gets a valid score, saying why', async () => {
    race('echo ${STRATEGY} > answer.txt', {}, 'echo "I like it"');
    const r = await runVigil(project, ['sequence', 'race']);
    expect(r.code).toBe(1);
    const run = rootRun(project);
    expect(run.reason).toBe('no candidate got a valid score');
    expect(outputOf(project, run)).toContain('SCORE: <number>');
    expect(existsSync(join(project.root, 'answer.txt'))).toBe(false);
  });
});
