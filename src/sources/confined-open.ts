// Opening a file a source reads, on its real path, only while that real path
// lies under the source root. Checked at every open, not once when the
// monitor was made: a log swapped for a symbolic link to a file outside the
// root, after creation or at a rotation, is refused, as is a file a glob
// found through a link. The last part is opened without following a link and
// the opened file is named again after the open, so a swap in between is caught.
// A hard link is the same file under another name, wherever the other name
// lies: its path says nothing of where the file belongs, so a reader that
// asks (the `log` source) refuses a file with more than one link.
import { constants } from 'node:fs';
import { type FileHandle, open, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';

export class OutsideRootError extends Error {
  constructor(readonly path: string, root: string, message?: string) {
    super(message ?? `source.path: ${path} now leads outside the source root ${root} (a symbolic link?); it is not read (see vigil serve --source-root)`);
  }
}

/** A file with more than one hard link: another of its names may lie outside the root. */
export class HardLinkedError extends OutsideRootError {
  constructor(path: string, root: string, links: number) {
    super(
      path,
      root,
      `source.path: ${path} has ${links} hard links; another name of the same file may lie outside the source root ${root}, so it is not read (copy the file, or log to a file of its own)`,
    );
  }
}

const under = (root: string, path: string) => {
  const rel = relative(root, path);
  return !(rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel));
};


/**
 * Opens `path` for reading if its real path lies under `root`; throws OutsideRootError if not, ENOENT if it
 * is missing, and HardLinkedError for a file with more than one link when `singleLink` asks.
 */
export async function openUnder(root: string, path: string, options: { singleLink?: boolean } = {}): Promise<FileHandle> {
  const realRoot = await realpath(root);
  const real = await realpath(path);
  if (!under(realRoot, real)) throw new OutsideRootError(path, root);
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
  // What was opened, whatever moved in between: Linux names it under /proc.
  const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => real);
  if (!under(realRoot, opened.replace(/ \(deleted\)$/, ''))) {
    await handle.close().catch(() => undefined);
    throw new OutsideRootError(path, root);
  }
  if (options.singleLink) {
    // Of the opened file itself: a link made after the path was checked is seen too.
    const { nlink } = await handle.stat();
    if (nlink > 1) {
      await handle.close().catch(() => undefined);
      throw new HardLinkedError(path, root, nlink);
    }
  }
  return handle;
}
