// A steps node's first job: its request (the tree's, with this node's name,
// --from, --run and --resume), the prepared run (prepare-run.ts: variables,
// workspace, plan), and the isolation its steps work in, after recovering
// what an earlier runner of this project left behind.
import { createCopyIsolation, createNoIsolation } from '../isolation/copy-modes.ts';
import type { Isolation } from '../isolation/isolation.ts';
import { stepsIsolation } from '../isolation/choose.ts';
import { branchExists } from '../isolation/run-branch.ts';
import { createWorktreeIsolation, stepNaming, type WorktreeNaming } from '../isolation/worktree.ts';
import type { RunJson } from '../records/run-record.ts';
import { type PreparedRun, prepareRun } from '../prepare-run.ts';
import { runIsLive } from '../records/runs-list.ts';
import type { NodeRequest, TreeRuntime } from './runtime.ts';

export interface PreparedNode {
  prep: PreparedRun;
  isolation: Isolation;
}

async function createIsolation(prep: PreparedRun, resumed: RunJson | null): Promise<Isolation> {
  const mode = stepsIsolation(prep.found.recipe);
  if (mode === 'worktree') return createWorktreeIsolation(prep.workspace, prep.runId, prep.found.file, resumed ? resumedNaming(prep.runId, resumed, prep.workspace) : undefined);
  if (mode === 'mirror' || mode === 'rsync') return createCopyIsolation(mode, prep.workspace, prep.projectRoot, prep.runId, prep.found.file);
  return createNoIsolation(prep.workspace);
}

export async function prepareStepsNode(rt: TreeRuntime, node: NodeRequest): Promise<PreparedNode> {
  const { from: _f, run: _r, resume: _s, ...base } = rt.req;
  const req = {
    ...base,
    name: node.found.recipe.name,
    ...(node.from ? { from: node.from } : {}),
    ...(node.run ? { run: node.run } : {}),
    ...(node.resume ? { resume: node.resume } : {}),
  };
  const prep = prepareRun(req, {
    found: node.found,
    vars: node.vars,
    env: node.env,
    config: rt.config,
    ...(node.workspace ? { workspace: node.workspace } : {}),
    ...(node.model ? { model: node.model } : {}),
  });
  for (const w of prep.warnings) rt.stderr.write(`${w}\n`);
  const isolation = await createIsolation(prep, node.resume ? (prep.resume?.previous ?? null) : null);
  const recovered = await isolation.recover((id) => runIsLive(prep.projectRoot, id));
  for (const line of recovered) rt.view.note(line);
  return { prep, isolation };
}

/**
 * --resume: a step whose copy's work was kept on its branch (committed by the recovery after its runner died,
 * or as it was stopped by a signal, a budget or a timeout) starts from it, as its agent's session goes on.
 * Not a conflict's: its work conflicted with the workspace, and the step is done again from the workspace.
 */
function resumedNaming(runId: string, previous: RunJson, repo: string): WorktreeNaming {
  const earlier = stepNaming(previous.id);
  return {
    ...stepNaming(runId),
    async startOf(label) {
      const step = previous.steps.find((s) => s.label === label);
      if (!step || step.status === 'conflict') return null;
      const branch = earlier.branchOf(label);
      return (await branchExists(repo, branch)) ? branch : null;
    },
  };
}
