// `log` with a `path`: follows a file line by line, like `tail -F`. The open
// descriptor is read to its end before a rotated file is let go, a file that
// shrank was truncated and is read again from the start, and the position
// (inode and offset) of the last line written is stored with that line, so a
// restart resumes right after it. Every open, the first and each after a
// rotation, checks the file's real path lies under the source root, and that
// it has one name only (a hard link to a file outside the root is refused).
import { type FileHandle, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { watch } from 'chokidar';
import { confinedPath } from '../config.ts';
import { HardLinkedError, OutsideRootError, openUnder } from '../confined-open.ts';
import type { SourceRun } from '../run.ts';

interface LogCursor {
  ino: number;
  pos: number;
}

const maxLineBytes = 64 << 10;
const chunkBytes = 64 << 10;
const pollMs = 2000;
const contactMs = 30_000;

export async function runLog(run: SourceRun): Promise<void> {
  const path = confinedPath(run.root, run.config.path as string, 'source.path');
  await stat(dirname(path)); // a missing directory is a failure (backoff); a missing file is waited for
  let file: FileHandle | null = null;
  let ino = 0;
  let pos = 0;
  let partial = Buffer.alloc(0);
  let busy: Promise<void> | null = null;
  let again = false;

  const openCurrent = async (resume: LogCursor | undefined): Promise<boolean> => {
    let handle: FileHandle;
    try {
      handle = await openUnder(run.root, path, { singleLink: true });
    } catch (error) {
      if (error instanceof OutsideRootError) throw error;
      return false;
    }
    const st = await handle.stat();
    file = handle;
    ino = st.ino;
    partial = Buffer.alloc(0);
    pos = resume === undefined ? st.size : resume.ino === st.ino && resume.pos <= st.size ? resume.pos : 0;
    if (resume === undefined || resume.ino !== ino || resume.pos !== pos) run.setCursor({ ino, pos });
    return true;
  };

  const readToEnd = async (handle: FileHandle): Promise<void> => {
    const { size, nlink } = await handle.stat();
    // Linked elsewhere since it was opened: nothing more is read from it.
    if (nlink > 1) throw new HardLinkedError(path, run.root, nlink);
    if (size < pos) {
      pos = 0; // truncated in place
      partial = Buffer.alloc(0);
    }
    const buffer = Buffer.alloc(chunkBytes);
    while (pos < size && !run.stopped) {
      // No further than the size just checked: bytes written after the check are read after the next one.
      const { bytesRead } = await handle.read(buffer, 0, Math.min(chunkBytes, size - pos), pos);
      if (bytesRead === 0) break;
      let data = Buffer.concat([partial, buffer.subarray(0, bytesRead)]);
      let lineStart = pos - partial.length;
      pos += bytesRead;
      let newline = data.indexOf(10);
      while (newline !== -1 || data.length > maxLineBytes) {
        const end = newline === -1 ? maxLineBytes : newline;
        const line = data.subarray(0, end).toString('utf8').replace(/\r$/, '');
        const next = lineStart + end + (newline === -1 ? 0 : 1);
        run.emit({ subject: path, data: { path, line }, cursor: { ino, pos: next } satisfies LogCursor });
        data = data.subarray(end + (newline === -1 ? 0 : 1));
        lineStart = next;
        newline = data.indexOf(10);
      }
      partial = Buffer.from(data);
    }
  };

  // A monitor new to an existing file follows it from its end; a file that appears later is read from its start.
  let first = true;
  const drain = async (): Promise<void> => {
    const resume = run.cursor<LogCursor>() ?? (first ? undefined : { ino: -1, pos: 0 });
    first = false;
    if (file === null && !(await openCurrent(resume))) return;
    await readToEnd(file!);
    const current = await stat(path).catch(() => null);
    if (current === null || current.ino !== ino) {
      // Rotated: the old file was read to its end; follow the new one from its start.
      await file!.close().catch(() => undefined);
      file = null;
      if (current !== null && (await openCurrent({ ino: current.ino, pos: 0 }))) await readToEnd(file!);
    }
  };

  const schedule = (): void => {
    if (busy) {
      again = true;
      return;
    }
    busy = drain()
      .catch((error: unknown) => run.fail(error))
      .finally(() => {
        busy = null;
        if (again && !run.stopped) {
          again = false;
          schedule();
        }
      });
  };

  const watcher = watch(dirname(path), {
    depth: 0,
    ignoreInitial: true,
    ignored: (p) => p !== dirname(path) && basename(p) !== basename(path),
  });
  watcher.on('all', schedule);
  watcher.on('error', (error) => run.fail(error));
  const poll = setInterval(schedule, pollMs);
  const contact = setInterval(() => run.contact(), contactMs);
  run.signal.addEventListener(
    'abort',
    () => {
      clearInterval(poll);
      clearInterval(contact);
      void watcher.close();
      void (file as FileHandle | null)?.close().catch(() => undefined);
    },
    { once: true },
  );
  schedule();
  await busy;
  run.contact();
}
