// transfer_mode "mirror" and "rsync": the step works in a copy of the
// workspace (without .git and .vigil);
// when it succeeds, the step's own changes (new, changed and deleted files
// against its starting snapshot, see copy-back.ts) come back; files others
// changed meanwhile are kept, and a file both changed is a reported
// conflict. The copies live under the system temp directory (a copy cannot
// sit inside what it copies). "mirror" copies with Node's fs, "rsync" with
// the rsync program.
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { cpSync, existsSync, mkdirSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { RunRefusedError } from '../errors.ts';
import { describeConflicts, planCopyBack, snapshot } from './copy-back.ts';
import { findOnPath } from '../../paths/which.ts';
import type { Isolation, KeptWork, MergeOutcome, StepWorkspace } from './isolation.ts';
import { runInOwnGroup } from './own-group.ts';

const SKIP = new Set(['.git', '.vigil']);

async function rsync(args: string[], input?: string): Promise<void> {
  const r = await runInOwnGroup('rsync', args, { input });
  if (r.code !== 0 || r.signal) throw new Error(`rsync failed: ${r.signal ? `stopped by ${r.signal}` : r.stderr.trim() || `exit ${r.code}`}`);
}

export function createCopyIsolation(mode: 'mirror' | 'rsync', workspace: string, projectRoot: string, runId: string, file: string): Isolation {
  if (mode === 'rsync' && !findOnPath('rsync')) throw new RunRefusedError(`${file}: transfer_mode "rsync" needs the rsync program on PATH`);
  const base = join(tmpdir(), 'vigil-mirrors', createHash('sha256').update(projectRoot).digest('hex').slice(0, 12));
  const filter = (src: string): boolean => {
    const rel = relative(workspace, src);
    return !SKIP.has(rel.split('/')[0] ?? '');
  };
  return {
    mode,
    async recover(isLive: (runId: string) => boolean): Promise<string[]> {
      if (!existsSync(base)) return [];
      const removed = readdirSync(base)
        .filter((r) => r !== runId && !isLive(r))
        .map((r) => join(base, r));
      for (const dir of removed) rmSync(dir, { recursive: true, force: true });
      return removed.map((dir) => `removed ${dir}, left behind by an interrupted run`);
    },
    async prepare(label: string, relDir: string): Promise<StepWorkspace> {
      const copy = join(base, runId, label);
      mkdirSync(copy, { recursive: true });
      // Taken before copying: a change made during the copy counts as the workspace's own.
      const workspaceStart = snapshot(workspace);
      if (mode === 'rsync') await rsync(['-a', '--exclude=/.git', '--exclude=/.vigil', `${workspace}/`, `${copy}/`]);
      else cpSync(workspace, copy, { recursive: true, filter, preserveTimestamps: true });
      const copyStart = snapshot(copy);
      const dir = join(copy, relDir);
      mkdirSync(dir, { recursive: true });
      return {
        dir,
        root: copy,
        async bringBack(): Promise<MergeOutcome> {
          const plan = planCopyBack(copy, workspace, copyStart, workspaceStart);
          if (plan.copy.length > 0) {
            // --ignore-times: the plan already lists exactly the changed files, and rsync's size+mtime
            // check would skip one edited within the same second to the same size.
            if (mode === 'rsync') await rsync(['-a', '--ignore-times', '--files-from=-', '--from0', `${copy}/`, `${workspace}/`], `${plan.copy.join('\0')}\0`);
            else
              for (const rel of plan.copy) {
                mkdirSync(dirname(join(workspace, rel)), { recursive: true });
                cpSync(join(copy, rel), join(workspace, rel), { preserveTimestamps: true });
              }
          }
          for (const rel of plan.remove) rmSync(join(workspace, rel), { force: true });
          if (plan.conflicts.length > 0) return { result: 'conflict', detail: describeConflicts(plan.conflicts, copy) };
          return { result: plan.copy.length + plan.remove.length > 0 ? 'merged' : 'nothing-to-merge' };
        },
        async dispose(keep: boolean): Promise<KeptWork> {
          // After a conflict the step's versions stay where the report says they are (and a kept copy's, there).
          if (keep) return { folder: copy };
          rmSync(copy, { recursive: true, force: true });
          // The run's folder, the project's and the shared root, once nothing else is in them.
          for (const dir of [join(base, runId), base, dirname(base)]) {
            try {
              rmdirSync(dir);
            } catch {
              break; // another step's copy is still there
            }
          }
          return null;
        },
      };
    },
  };
}

export function createNoIsolation(workspace: string): Isolation {
  return {
    mode: 'none',
    recover: async () => [],
    async prepare(_label: string, relDir: string): Promise<StepWorkspace> {
      const dir = join(workspace, relDir);
      mkdirSync(dir, { recursive: true });
      return { dir, root: workspace, bringBack: async () => ({ result: 'merged' }), dispose: async () => null };
    },
  };
}
