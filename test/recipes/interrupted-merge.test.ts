// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} in these strings is vigil's own variable syntax, substituted by the runner
// Ctrl-C in a terminal while a composite run merges a child's work back: the
// terminal signals the whole foreground process group, git included. The
// merge runs to its end (git has a group of its own) and the record says
// that child was merged; before, git died mid-merge ("git merge failed: ;")
// or a merge that had finished was reported "not merged".
// A pre-merge-commit hook holds the first merge open until the test has
// signalled the runner, so the signal always lands inside it.
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { untilTrue } from '../support/until.ts';
import { git, makeShProject, rootRun, shRecipe } from './composite-helpers.ts';
import { type Project, startVigil, type VigilResult } from './helpers.ts';

vi.setConfig({ testTimeout: 180_000 });

let project: Project;
afterEach(() => project?.cleanup());

/** Starts `name` in a process group of its own, sends the group SIGINT once the first merge has begun, then lets that merge go on. */
async function ctrlCDuringFirstMerge(name: string): Promise<VigilResult> {
  const [entered, go] = [join(project.tmp, 'merge-entered'), join(project.tmp, 'merge-go')];
  const hook = join(project.root, '.git', 'hooks', 'pre-merge-commit');
  writeFileSync(hook, `#!/bin/sh\n[ -e '${entered}' ] && exit 0\ntouch '${entered}'\nwhile [ ! -e '${go}' ]; do sleep 0.05; done\n`);
  chmodSync(hook, 0o755);
  const run = startVigil(project, ['sequence', name], {}, project.root, true);
  run.child.stdin!.end();
  await untilTrue('the first merge to begin', () => existsSync(entered));
  process.kill(-run.child.pid!, 'SIGINT');
  await run.waitFor(/SIGINT: cancelling the run/);
  writeFileSync(go, '');
  return run.done;
}

describe('Ctrl-C while a child is being merged back', () => {
  it('parallel: the merge under way completes and is recorded merged; the child not yet merged is kept on its branch', async () => {
    project = makeShProject();
    shRecipe(project, 'one', 'echo ${NAME} > out-${NAME}.txt');
    project.recipe({ name: 'fan', type: 'parallel', recipe: 'one', vars: [{ NAME: 'a' }, { NAME: 'b' }] });
    const r = await ctrlCDuringFirstMerge('fan');
    expect(r.code, r.stderr + r.stdout).toBe(130);
    const root = rootRun(project);
    const output = r.stdout + r.stderr;
    expect(output).not.toContain('git merge failed');
    expect(output).not.toContain('child 0 succeeded but was not merged');
    expect(root.children!.find((c) => c.role === 'child 0')!.result).toMatchObject({ merge: 'merged' });
    expect(git(project.root, 'show', `vigil/${root.id}:out-a.txt`)).toBe('a\n');
    expect(output).toContain(`child 1 succeeded but was not merged (the run was cancelled by SIGINT): its work is kept on branch vigil/${root.id}-1`);
    expect(git(project.root, 'show', `vigil/${root.id}-1:out-b.txt`)).toBe('b\n');
    expect(git(project.root, 'status', '--porcelain')).toBe('');
  });

  it("convergent: the winner's merge under way completes; nothing was left to stop, so the run ends as it would have", async () => {
    project = makeShProject();
    shRecipe(project, 'solve', 'echo ${STRATEGY} > answer.txt');
    shRecipe(project, 'score', 'echo "SCORE: $$(cat ${CANDIDATE_DIR}/answer.txt)"');
    project.recipe({ name: 'race', type: 'convergent', recipe: 'solve', scorer: 'score', strategies: 2 });
    const r = await ctrlCDuringFirstMerge('race');
    const output = r.stdout + r.stderr;
    expect(output).not.toContain('git merge failed');
    expect(output).not.toContain('but was not merged');
    const root = rootRun(project);
    expect(r.code, output).toBe(0);
    expect(root.status).toBe('succeeded');
    expect(root.children!.find((c) => c.role === 'strategy 2')!.result).toMatchObject({ winner: true, merge: 'merged' });
    expect(git(project.root, 'show', `vigil/${root.id}:answer.txt`)).toBe('2\n');
    // The loser goes as in any run without keep_candidates.
    expect(git(project.root, 'branch', '--list', `vigil/${root.id}-strategy-1`)).toBe('');
    expect(git(project.root, 'status', '--porcelain')).toBe('');
  });
});
