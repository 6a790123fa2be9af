// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} in these strings is vigil's own variable syntax, substituted by the runner
// adversarial recipes end to end: blue → red → judge rounds in one worktree,
// verdict JSON, early stop, merge only when blue wins, invalid verdicts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { git, interruptedRun, makeShProject, outputOf, rootRun, shRecipe } from './composite-helpers.ts';
import { type Project, runVigil } from './helpers.ts';

// Each test runs many real processes (a loaded machine makes that slow).
vi.setConfig({ testTimeout: 180_000 });

let project: Project;
afterEach(() => project?.cleanup());

function contest(project: Project, judgeScript: string, rounds = 3): void {
  shRecipe(project, 'builder', 'echo "v${ROUND}" > impl.txt; echo "built v${ROUND}; red said: $$(cat \'${RED_OUTPUT}\' 2>/dev/null)"');
  shRecipe(project, 'attacker', 'echo "attack on $$(cat impl.txt) after reading ${BLUE_OUTPUT}"');
  shRecipe(project, 'judge', judgeScript);
  project.recipe({ name: 'duel', type: 'adversarial', rounds, blue: { recipe: 'builder' }, red: { recipe: 'attacker' }, judge: { recipe: 'judge', vars: { STRICT: 'yes' } } });
}

describe('adversarial', () => {
  it('runs blue, red and judge per round, stops at done, and merges the contest back when blue wins', async () => {
    project = makeShProject();
    contest(
      project,
      'if [ ${ROUND} = 1 ]; then echo \'thinking {"winner": "red", "reason": "v1 breaks"}\'; else echo \'{"winner":"blue","reason":"v2 holds","score":9,"done":true}\'; fi',
    );
    const r = await runVigil(project, ['sequence', 'duel']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = rootRun(project);
    expect(run.children!.map((c) => c.role)).toEqual(['blue round 1', 'red round 1', 'judge round 1', 'blue round 2', 'red round 2', 'judge round 2']);
    expect(run.children![2]!.result).toMatchObject({ verdict: { winner: 'red', reason: 'v1 breaks' } });
    expect(outputOf(project, run)).toContain('round 1: red — v1 breaks\nround 2: blue (score 9) — v2 holds');
    // Not asked to merge: the results are on the run's branch, the command that merges them printed.
    expect(r.stdout).toContain(`the results are on branch vigil/${run.id}; merge it with: git merge --no-ff vigil/${run.id}`);
    expect(existsSync(join(project.root, 'impl.txt'))).toBe(false);
    expect(git(project.root, 'log', '--format=%s', 'main')).toBe('init\n');
    expect(git(project.root, 'status', '--porcelain')).toBe('');
    expect(git(project.root, 'show', `vigil/${run.id}:impl.txt`)).toBe('v2\n');
    expect(git(project.root, 'log', '-1', '--format=%s', `vigil/${run.id}`)).toBe(
      `vigil ${run.id}: adversarial recipe "duel": merge the contest of blue "builder", red "attacker" and judge "judge"\n`,
    );
    git(project.root, 'merge', '--no-ff', '-q', `vigil/${run.id}`);
    expect(readFileSync(join(project.root, 'impl.txt'), 'utf8')).toBe('v2\n');
  });

  it("shows the escape sequences of an agent's verdict as text, never sending them to the terminal", async () => {
    project = makeShProject();
    // A judge (any agent a repository can steer) whose reason would set the window title and clear the screen.
    contest(project, 'echo \'{"winner":"blue","reason":"held \\u001b]0;pwned\\u0007 up \\u001b[2J","done":true}\'', 1);
    const r = await runVigil(project, ['sequence', 'duel']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('round 1: blue — held \\u001b]0;pwned\\u0007 up \\u001b[2J');
    expect(r.stdout + r.stderr).not.toMatch(/[\u001b\u0007]/);
    const shown = await runVigil(project, ['runs', rootRun(project).id]);
    expect(shown.stdout).toContain('held \\u001b]0;pwned');
    expect(shown.stdout).not.toMatch(/[\u001b\u0007]/);
  });

  it('passes the other sides\' latest outputs as BLUE_OUTPUT, RED_OUTPUT and JUDGE_OUTPUT', async () => {
    project = makeShProject();
    contest(project, 'echo "judge saw: $$(cat ${BLUE_OUTPUT}) / $$(cat ${RED_OUTPUT}) strict=${STRICT}"; echo \'{"winner":"blue","reason":"fine","done":true}\'');
    const r = await runVigil(project, ['sequence', 'duel']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = rootRun(project);
    const judge = JSON.parse(readFileSync(join(project.root, '.vigil', 'runs', run.children![2]!.run_id!, 'output.txt'), 'utf8').split('\n').at(-2)!);
    expect(judge.winner).toBe('blue');
    const judgeOut = readFileSync(join(project.root, '.vigil', 'runs', run.children![2]!.run_id!, 'output.txt'), 'utf8');
    expect(judgeOut).toContain('judge saw: built v1; red said:  / attack on v1 after reading /');
    expect(judgeOut).toContain('strict=yes');
  });

  it("cancelled mid-contest: keeps the rounds' work on the contest's branch, for --resume to go on from", async () => {
    project = makeShProject();
    contest(project, 'echo \'{"winner":"blue","reason":"holds"}\'');
    // Red works until the run is cancelled, after blue's first round stood.
    shRecipe(project, 'attacker', 'while :; do sleep 0.1; done');
    const r = await interruptedRun(project, 'duel', /blue round 1: succeeded/);
    expect(r.code, r.stderr + r.stdout).toBe(130);
    const root = rootRun(project);
    const branch = `vigil/${root.id}-contest`;
    expect(r.stdout).toContain(`the contest stopped (the run was cancelled by SIGINT): its work so far is kept on branch ${branch} (git merge --no-ff ${branch})`);
    // Blue's round 1 stands in the record and its work on the branch (the copy was once removed with it).
    expect(root.children![0]).toMatchObject({ role: 'blue round 1', status: 'succeeded' });
    expect(git(project.root, 'show', `${branch}:impl.txt`)).toBe('v1\n');
    expect(git(project.root, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    // Resumed with a red that ends: blue's round 1 is reused, and red's round 1 finds its work in the copy.
    shRecipe(project, 'attacker', 'echo "attack on $$(cat impl.txt)"');
    const resumed = await runVigil(project, ['sequence', 'duel', '--resume', root.id]);
    expect(resumed.code, resumed.stderr + resumed.stdout).toBe(0);
    const again = rootRun(project);
    expect(again.id).not.toBe(root.id);
    expect(again.children!.find((c) => c.role === 'blue round 1')!.run_id).toBe(root.children![0]!.run_id);
    const red = again.children!.find((c) => c.role === 'red round 1')!;
    expect(readFileSync(join(project.root, '.vigil', 'runs', red.run_id!, 'output.txt'), 'utf8')).toContain('attack on v1');
  });

  it('fails without merging when red wins the last round', async () => {
    project = makeShProject();
    contest(project, 'echo \'{"winner":"red","reason":"still broken"}\'', 2);
    const r = await runVigil(project, ['sequence', 'duel']);
    expect(r.code).toBe(1);
    const run = rootRun(project);
    expect(run.children).toHaveLength(6);
    expect(run.reason).toContain('the last verdict (round 2) went to red: still broken');
    expect(existsSync(join(project.root, 'impl.txt'))).toBe(false);
    expect(git(project.root, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
  });

  it('fails the round naming what is wrong with an invalid verdict', async () => {
    project = makeShProject();
    contest(project, 'echo \'{"winner":"purple","reason":"?"}\'');
    const r = await runVigil(project, ['sequence', 'duel']);
    expect(r.code).toBe(1);
    const run = rootRun(project);
    expect(run.reason).toContain('round 1: the judge "judge" gave no valid verdict: verdict.winner: "purple" is not allowed; allowed: "blue", "red", "draw"');
    expect(run.children!.at(-1)!.status).toBe('failed');
  });
});
