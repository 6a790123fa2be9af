import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { untilTrue } from '../support/until.ts';
import { makeShProject, shRecipe } from './composite-helpers.ts';
import { lastRun, makeProject, type Project, runVigil, startVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

const git = (args: string[]) =>
  execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], {
    cwd: project.root,
    env: { ...process.env, HOME: project.home },
  }).toString();

function gitProject(): void {
  project = makeProject();
  project.file('shared.txt', 'base\n');
  git(['init', '-q', '-b', 'main']);
  git(['add', 'shared.txt']);
  git(['commit', '-q', '-m', 'base']);
}

const worktrees = () => git(['worktree', 'list', '--porcelain']).split('\n').filter((l) => l.startsWith('worktree '));

describe('transfer_mode worktree', () => {
  it('runs concurrent steps in their own worktrees and merges their changes back', async () => {
    gitProject();
    project.recipe({
      name: 'parallel-edits',
      canary: false,
      transfer_mode: 'worktree',
      steps: [
        { label: 'left', args: ['WRITE=left.txt:from_left'], wave: 1, concurrencySafe: true },
        { label: 'right', args: ['WRITE=right.txt:from_right'], wave: 1, concurrencySafe: true },
        { label: 'after', args: ['WRITE=after.txt:saw_both'], wave: 2, build_command: 'test -f left.txt && test -f right.txt' },
      ],
    });
    const r = await runVigil(project, ['sequence', 'parallel-edits']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(join(project.root, 'left.txt'), 'utf8')).toBe('from left\n');
    expect(readFileSync(join(project.root, 'right.txt'), 'utf8')).toBe('from right\n');
    expect(readFileSync(join(project.root, 'after.txt'), 'utf8')).toBe('saw both\n');
    // Each step worked in its own worktree, not in the workspace.
    const cwds = project.logEntries().filter((e) => e.step).map((e) => String(e.cwd));
    expect(new Set(cwds).size).toBe(3);
    for (const cwd of cwds) expect(cwd).toContain(join('.vigil', 'worktrees'));
    // Every worktree and branch is gone; the merges are in the history.
    expect(worktrees()).toHaveLength(1);
    expect(git(['branch', '--list', 'vigil/*']).trim()).toBe('');
    expect(git(['log', '--oneline'])).toContain('merge step left');
    expect(stepOf(lastRun(project), 'left').merge).toMatchObject({ result: 'merged' });
  });

  it('reports a conflict when two steps change the same lines, keeping the work on a branch', async () => {
    gitProject();
    project.recipe({
      name: 'clash',
      canary: false,
      transfer_mode: 'worktree',
      steps: [
        { label: 'one', args: ['WRITE=shared.txt:version_one'], wave: 1, concurrencySafe: true },
        { label: 'two', args: ['WRITE=shared.txt:version_two'], wave: 1, concurrencySafe: true },
      ],
    });
    const r = await runVigil(project, ['sequence', 'clash']);
    expect(r.code).toBe(1);
    const run = lastRun(project);
    const statuses = run.steps.map((s) => s.status).sort();
    expect(statuses).toEqual(['conflict', 'succeeded']);
    const loser = run.steps.find((s) => s.status === 'conflict')!;
    expect(loser.reason).toContain('conflicts in shared.txt');
    expect(loser.reason).toContain(`branch vigil/${run.id}/${loser.label}`);
    const winner = run.steps.find((s) => s.status === 'succeeded')!;
    expect(readFileSync(join(project.root, 'shared.txt'), 'utf8')).toBe(`version ${winner.label}\n`);
    // The workspace is left clean (the failed merge was aborted), the worktrees removed, the branch kept.
    expect(git(['status', '--porcelain', '--untracked-files=no']).trim()).toBe('');
    expect(worktrees()).toHaveLength(1);
    expect(git(['branch', '--list', `vigil/${run.id}/${loser.label}`])).toContain(loser.label);
  });

  it('removes worktrees left behind by a crashed run on the next run, keeping their work on a branch', async () => {
    gitProject();
    const dead = join(project.root, '.vigil', 'worktrees', '20200101-000000-dead');
    git(['worktree', 'add', '-q', '-b', 'vigil/20200101-000000-dead/ghost', join(dead, 'ghost'), 'HEAD']);
    git(['worktree', 'add', '-q', '-b', 'vigil/20200101-000000-dead/worker', join(dead, 'worker'), 'HEAD']);
    writeFileSync(join(dead, 'worker', 'done.txt'), 'finished work\n'); // what the crashed step wrote, never committed
    expect(worktrees()).toHaveLength(3);
    project.recipe({ name: 'after-crash', canary: false, transfer_mode: 'worktree', steps: [{ label: 'a', args: ['x'] }] });
    const r = await runVigil(project, ['sequence', 'after-crash']);
    expect(r.code, r.stderr).toBe(0);
    // Nothing of its own: the worktree and its branch go.
    expect(r.stdout).toContain(`removed worktree ${join(dead, 'ghost')}, left by interrupted run 20200101-000000-dead (its work is on another branch)`);
    expect(git(['branch', '--list', 'vigil/20200101-000000-dead/ghost']).trim()).toBe('');
    // Work of its own: committed on its branch, which stays, named.
    expect(r.stdout).toContain(`its work (committed now) stays on branch vigil/20200101-000000-dead/worker`);
    expect(git(['show', 'vigil/20200101-000000-dead/worker:done.txt'])).toBe('finished work\n');
    expect(existsSync(dead)).toBe(false);
    expect(worktrees()).toHaveLength(1);

    // vigil runs prune removes what is left, saying what; --dry-run only says.
    const dry = await runVigil(project, ['runs', 'prune', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe('would remove branch vigil/20200101-000000-dead/worker (its work is merged nowhere else)\n');
    expect(git(['branch', '--list', 'vigil/*'])).toContain('worker');
    const pruned = await runVigil(project, ['runs', 'prune']);
    expect(pruned.stdout).toBe('removed branch vigil/20200101-000000-dead/worker (its work is merged nowhere else)\n');
    expect(git(['branch', '--list', 'vigil/*']).trim()).toBe('');
    expect((await runVigil(project, ['runs', 'prune'])).stdout).toContain('nothing to prune');
  });

  // A step stopped mid-work, by its runner's death (-9: the next run's recovery commits the copy) or by Ctrl-C
  // (the runner commits it): its work so far stays on its branch, and --resume goes on from it.
  it.each([
    ['killed with -9', 'SIGKILL', (id: string) => `its work (committed now) stays on branch vigil/${id}/work (vigil sequence <recipe> --resume ${id} brings it in`],
    ['stopped by Ctrl-C', 'SIGINT', (id: string) => `step "work" was stopped: its work so far is kept on branch vigil/${id}/work (git merge --no-ff vigil/${id}/work)`],
  ] as const)('a step whose runner was %s keeps its copy\'s work, and --resume starts it from there', async (_how, signal, said) => {
    project = makeShProject();
    const go = join(project.home, 'go');
    // The first part is written, then the step waits; resumed from its copy's work, it finds the first part.
    shRecipe(project, 'slow', `if [ -f part1.txt ]; then echo resumed > evidence.txt; fi; echo part1 > part1.txt; while [ ! -f ${go} ]; do sleep 0.1; done`, { transfer_mode: 'worktree' });
    const first = startVigil(project, ['sequence', 'slow']);
    await first.waitFor(/work: running/);
    const id = lastRun(project).id;
    await untilTrue('the step to write its first part', () => existsSync(join(project.root, '.vigil', 'worktrees', id, 'work', 'part1.txt')));
    first.child.kill(signal);
    const stopped = await first.done;
    writeFileSync(go, '');
    const r = await runVigil(project, ['sequence', 'slow', '--resume', id]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(stopped.stdout + r.stdout).toContain(said(id));
    expect(readFileSync(join(project.root, 'evidence.txt'), 'utf8')).toBe('resumed\n');
    // Merged now: the earlier run's branch goes, and no copy is left.
    expect(git(['branch', '--list', 'vigil/*']).trim()).toBe('');
    expect(worktrees()).toHaveLength(1);
  });

  it('keeps the worktrees of a run that is still going when another run starts', async () => {
    gitProject();
    project.recipe({ name: 'slow', canary: false, transfer_mode: 'worktree', steps: [{ label: 'busy', args: ['HANG'] }] });
    project.recipe({ name: 'quick', canary: false, transfer_mode: 'worktree', steps: [{ label: 'a', args: ['x'] }] });
    const slow = startVigil(project, ['sequence', 'slow']);
    await slow.waitFor(/busy: running/);
    let busy: string | undefined;
    for (let i = 0; i < 100 && !busy; i += 1) {
      busy = worktrees().find((w) => w.endsWith('/busy'));
      if (!busy) await new Promise((r) => setTimeout(r, 50));
    }
    expect(busy).toBeDefined();
    const quick = await runVigil(project, ['sequence', 'quick']);
    expect(quick.code, quick.stderr).toBe(0);
    expect(quick.stdout).not.toContain('left behind');
    expect(worktrees()).toContain(busy);
    slow.child.kill('SIGINT');
    expect((await slow.done).code).toBe(130);
    expect(worktrees()).toHaveLength(1);
  });

  it('refuses worktree mode outside a git repository', async () => {
    project = makeProject();
    const file = project.recipe({ name: 'nogit', canary: false, transfer_mode: 'worktree', steps: [{ label: 'a', args: ['x'] }] });
    const r = await runVigil(project, ['sequence', 'nogit']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}: transfer_mode "worktree" needs the workspace`);
    expect(project.logEntries()).toEqual([]);
  });
});

describe('transfer_mode mirror and rsync', () => {
  for (const mode of ['mirror', 'rsync'] as const) {
    it(`${mode}: the step works on a copy, and its changes (new, changed, deleted files) come back when it succeeds`, async () => {
      project = makeProject();
      project.file('keep.txt', 'old\n');
      project.file('drop.txt', 'bye\n');
      project.recipe({
        name: 'copy',
        canary: false,
        transfer_mode: mode,
        steps: [
          { label: 'edit', args: ['WRITE=keep.txt:new WRITE=made/here.txt:hi'], build_command: 'rm drop.txt' },
          { label: 'broken', args: ['WRITE=never.txt:no FAIL'] },
        ],
      });
      const r = await runVigil(project, ['sequence', 'copy']);
      expect(r.code).toBe(1);
      expect(readFileSync(join(project.root, 'keep.txt'), 'utf8')).toBe('new\n');
      expect(readFileSync(join(project.root, 'made', 'here.txt'), 'utf8')).toBe('hi\n');
      expect(existsSync(join(project.root, 'drop.txt'))).toBe(false);
      // A failed step's changes stay out of the workspace.
      expect(existsSync(join(project.root, 'never.txt'))).toBe(false);
      const cwd = String(project.logEntries().find((e) => e.step === 'edit')!.cwd);
      expect(cwd).not.toBe(project.root);
      expect(existsSync(cwd)).toBe(false);
    });
  }
});
