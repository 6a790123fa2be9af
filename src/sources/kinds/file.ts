// `file`: watches a file or a directory (chokidar 4), optionally narrowed by a
// glob, and writes add, change and unlink with the file's size and SHA-256.
// The hashes written are stored, so a restart writes only what changed
// while the server was down. Links are not followed out of the source root.
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { watch } from 'chokidar';
import { confinedPath } from '../config.ts';
import { OutsideRootError, openUnder } from '../confined-open.ts';
import { globToRegExp } from '../../paths/glob.ts';
import type { SourceRun } from '../run.ts';

interface FileCursor {
  files: Record<string, { size: number; sha256: string }>;
}

const maxFiles = 10_000;
const contactMs = 30_000;

/** Size and SHA-256 of a file whose real path lies under the root; OutsideRootError for one reached through a link out of it. */
async function measure(root: string, path: string): Promise<{ size: number; sha256: string }> {
  const handle = await openUnder(root, path);
  try {
    const { size } = await handle.stat();
    const hash = createHash('sha256');
    for await (const chunk of handle.createReadStream({ autoClose: false, start: 0 })) hash.update(chunk as Buffer);
    return { size, sha256: hash.digest('hex') };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

export async function runFile(run: SourceRun): Promise<void> {
  const root = confinedPath(run.root, run.config.path as string, 'source.path');
  await stat(root);
  const glob = typeof run.config.glob === 'string' ? globToRegExp(run.config.glob) : null;
  const cursor: FileCursor = { files: { ...(run.cursor<FileCursor>()?.files ?? {}) } };
  const nameOf = (path: string) => relative(root, path).split(sep).join('/') || relative(run.root, path).split(sep).join('/');
  const seenAtStart = new Set<string>();
  let ready = false;

  const record = async (event: 'add' | 'change', path: string) => {
    const name = nameOf(path);
    if (!ready) seenAtStart.add(name);
    let size: number;
    let sha256: string;
    try {
      ({ size, sha256 } = await measure(run.root, path));
    } catch (error) {
      // A file swapped for a link out of the root is no longer the file watched.
      if (error instanceof OutsideRootError) removed(name);
      return; // else gone again before it could be read; its unlink follows
    }
    const before = cursor.files[name];
    if (before?.sha256 === sha256 && before.size === size) return;
    if (!before && Object.keys(cursor.files).length >= maxFiles) return;
    cursor.files[name] = { size, sha256 };
    run.emit({ subject: name, data: { event: before ? 'change' : event, path: name, size, sha256 }, cursor });
  };
  const removed = (name: string) => {
    if (!(name in cursor.files)) return;
    delete cursor.files[name];
    run.emit({ subject: name, data: { event: 'unlink', path: name }, cursor });
  };

  // Links are not followed: a glob never walks into a folder outside the root, and a linked file is read only when its real path is under it.
  const watcher = watch(root, {
    ignoreInitial: false,
    followSymlinks: false,
    ignored: (path, stats) => glob !== null && stats?.isFile() === true && !glob.test(nameOf(path)),
  });
  // Hashing is serialised so that events of one file are written in order.
  let queue = Promise.resolve();
  const enqueue = (task: () => Promise<void> | void) => {
    queue = queue.then(task).catch((error: unknown) => run.fail(error));
  };
  watcher.on('add', (path) => enqueue(() => record('add', path)));
  watcher.on('change', (path) => enqueue(() => record('change', path)));
  watcher.on('unlink', (path) => enqueue(() => removed(nameOf(path))));
  watcher.on('error', (error) => run.fail(error));
  watcher.on('ready', () =>
    enqueue(() => {
      ready = true;
      // Files written before that are gone now were removed while the server was down.
      for (const name of Object.keys(cursor.files)) if (!seenAtStart.has(name)) removed(name);
      run.contact();
    }),
  );
  const contact = setInterval(() => run.contact(), contactMs);
  run.signal.addEventListener(
    'abort',
    () => {
      clearInterval(contact);
      void watcher.close();
    },
    { once: true },
  );
}
