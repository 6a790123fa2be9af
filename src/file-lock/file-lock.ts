// A small cross-process lock: a lock file created with O_EXCL holding the
// holder's pid, retried every 20 ms (a synchronous wait: SDK calls are
// synchronous). A lock whose holder is gone (killed with -9) is taken over at
// once; one without a pid (its holder died between creating and writing it)
// is stale after 30 s.
import { closeSync, linkSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { VigilError, type VigilErrorCode } from '../errors/vigil-error.ts';
import { processAlive } from './process-alive.ts';

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function holderOf(file: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Removes a lock left by a dead holder: moved aside first, so that a lock a live process took meanwhile is put back, not deleted. */
function takeOverStale(lock: string): void {
  const pid = holderOf(lock);
  if (pid === null) {
    try {
      if (Date.now() - statSync(lock).mtimeMs > 30_000) rmSync(lock, { force: true });
    } catch {
      // removed meanwhile
    }
    return;
  }
  if (pid === process.pid || processAlive(pid)) return;
  const aside = `${lock}.stale.${process.pid}`;
  try {
    renameSync(lock, aside);
  } catch {
    return; // taken over or released meanwhile
  }
  const moved = holderOf(aside);
  if (moved !== null && moved !== pid && processAlive(moved)) {
    try {
      linkSync(aside, lock);
    } catch {
      // another process holds a new lock already; the live holder's lock is lost either way
    }
    rmSync(aside, { force: true });
    return;
  }
  rmSync(aside, { force: true });
  process.stderr.write(`vigil: took over the lock ${lock} left by process ${pid}, which is gone\n`);
}

/** Takes the lock if it is free (or its holder is gone); the open lock file, or null while another holds it. */
function tryLock(lock: string): number | null {
  let fd: number | null = null;
  try {
    fd = openSync(lock, 'wx', 0o600);
    writeSync(fd, `${process.pid}\n`);
    return fd;
  } catch (error) {
    if (fd !== null) {
      closeSync(fd);
      rmSync(lock, { force: true });
      throw error;
    }
    takeOverStale(lock);
    return null;
  }
}

function unlock(lock: string, fd: number): void {
  closeSync(fd);
  rmSync(lock, { force: true });
}

const timedOut = (lock: string, code: VigilErrorCode, waitMs: number) =>
  new VigilError(code, `locked by another process for over ${waitMs / 1000} s (${lock}${lockHolder(lock)})`);

export function withFileLock<T>(lock: string, code: VigilErrorCode, body: () => T): T {
  const deadline = Date.now() + 10_000;
  let fd = tryLock(lock);
  while (fd === null) {
    if (Date.now() > deadline) throw timedOut(lock, code, 10_000);
    Atomics.wait(sleeper, 0, 0, 20);
    fd = tryLock(lock);
  }
  try {
    return body();
  } finally {
    unlock(lock, fd);
  }
}

/** withFileLock for a body that awaits (a request to a server): the wait for the lock does not block the event loop. */
export async function withFileLockAsync<T>(lock: string, code: VigilErrorCode, body: () => Promise<T>, waitMs = 30_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  let fd = tryLock(lock);
  while (fd === null) {
    if (Date.now() > deadline) throw timedOut(lock, code, waitMs);
    await new Promise((resolve) => setTimeout(resolve, 20));
    fd = tryLock(lock);
  }
  try {
    return await body();
  } finally {
    unlock(lock, fd);
  }
}

function lockHolder(lock: string): string {
  const pid = holderOf(lock);
  return pid === null ? '' : `, held by process ${pid}`;
}
