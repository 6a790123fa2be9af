// transfer_mode "mirror" and "rsync": the step works in a copy of the
// workspace (without .git and .vigil);
// when it succeeds the copy is mirrored back (new, changed and deleted
// files). The copies live under the system temp directory (a copy cannot
// sit inside what it copies). "mirror" copies with Node's fs, "rsync" with the rsync program.
// Concurrent steps that touch the same file: the last one back wins; use
// "worktree" when that matters.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { RunRefusedError } from '../errors.ts';
import { findOnPath } from '../preflight/which.ts';
import type { Isolation, MergeOutcome, StepWorkspace } from './isolation.ts';

const SKIP = new Set(['.git', '.vigil']);

function listFiles(root: string, dir = root, out = new Set<string>()): Set<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (dir === root && SKIP.has(entry.name)) continue;
    if (entry.isDirectory()) listFiles(root, path, out);
    else out.add(relative(root, path));
  }
  return out;
}

function rsync(args: string[]): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    execFile('rsync', args, (error, _out, stderr) => (error ? reject(new Error(`rsync failed: ${stderr}`)) : resolvePromise()));
  });
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
      return removed;
    },
    async prepare(label: string, relDir: string): Promise<StepWorkspace> {
      const copy = join(base, runId, label);
      mkdirSync(copy, { recursive: true });
      if (mode === 'rsync') await rsync(['-a', '--exclude=/.git', '--exclude=/.vigil', `${workspace}/`, `${copy}/`]);
      else cpSync(workspace, copy, { recursive: true, filter, preserveTimestamps: true });
      const before = listFiles(copy);
      const dir = join(copy, relDir);
      mkdirSync(dir, { recursive: true });
      return {
        dir,
        root: copy,
        async bringBack(): Promise<MergeOutcome> {
          if (mode === 'rsync') {
            // --checksum: a same-size edit within the same second must not be missed.
            await rsync(['-a', '--checksum', '--delete', '--exclude=/.git', '--exclude=/.vigil', `${copy}/`, `${workspace}/`]);
            return { result: 'merged' };
          }
          const after = listFiles(copy);
          for (const rel of after) {
            const src = join(copy, rel);
            const dst = join(workspace, rel);
            if (!existsSync(dst) || !readFileSync(dst).equals(readFileSync(src))) cpSync(src, dst, { preserveTimestamps: true });
          }
          for (const rel of before) if (!after.has(rel)) rmSync(join(workspace, rel), { force: true });
          return { result: 'merged' };
        },
        async dispose(): Promise<void> {
          rmSync(copy, { recursive: true, force: true });
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
      return { dir, root: workspace, bringBack: async () => ({ result: 'merged' }), dispose: async () => {} };
    },
  };
}
