// How a step's files are kept apart from the workspace and its peers
// (`transfer_mode`). Each mode hands a step its own directory and, when the
// step succeeds, brings its changes back.
export interface MergeOutcome {
  result: 'merged' | 'nothing-to-merge' | 'conflict';
  branch?: string;
  detail?: string;
}

export interface StepWorkspace {
  /** Where the step runs (its `dir` inside the isolated copy). */
  dir: string;
  /** Root of the isolated copy: what a sandbox may write. */
  root: string;
  /** Brings the step's changes back into the workspace. */
  bringBack(): Promise<MergeOutcome>;
  /**
   * Removes the isolated copy; always called, also after failure or cancellation. With `keep` (a conflict, a
   * step stopped from outside, work not merged because the run was cancelled, a candidate kept) the copy's
   * work is kept, and the answer says where: the branch it was committed on, or the folder left in place;
   * null when there was none.
   */
  dispose(keep: boolean): Promise<KeptWork>;
}

/** Where a kept copy's work is. */
export type KeptWork = { branch: string } | { folder: string } | null;

/** Disposes of `ws` (keeping its work when `keep`); a copy that cannot be removed is said, not thrown: the run goes on. */
export function disposeCopy(ws: StepWorkspace, keep: boolean, what: string, say: (line: string) => void): Promise<KeptWork> {
  return ws.dispose(keep).catch((e: Error) => {
    say(`could not remove ${what}: ${e.message}`);
    return null;
  });
}

/** "on branch vigil/<run>-0 (git merge --no-ff vigil/<run>-0)", or "in <folder>, until …" (the next copying run removes it). */
export function keptWhere(kept: NonNullable<KeptWork>): string {
  return 'branch' in kept ? `on branch ${kept.branch} (git merge --no-ff ${kept.branch})` : `in ${kept.folder}, until the next run that copies this workspace`;
}

/** What a composite says of work that succeeded but was not merged because its run stopped (`why`), and that it kept. */
export function keptUnmerged(who: string, why: string, kept: NonNullable<KeptWork>): string {
  return `${who} succeeded but was not merged (${why}): its work is kept ${keptWhere(kept)}`;
}

export interface Isolation {
  readonly mode: 'worktree' | 'mirror' | 'rsync' | 'none';
  /** Cleans what earlier runs left behind after a crash (copies of runs for which `isLive` says true are kept); one line per copy saying what became of it. */
  recover(isLive: (runId: string) => boolean): Promise<string[]>;
  prepare(label: string, relDir: string): Promise<StepWorkspace>;
}
