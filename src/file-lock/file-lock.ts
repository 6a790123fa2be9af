// A small cross-process lock: a lock file created with O_EXCL, retried every
// 20 ms (a synchronous wait: SDK calls are synchronous), stale after 30 s so
// a killed holder cannot block everyone forever.
import { closeSync, openSync, rmSync, statSync } from 'node:fs';
import { VigilError, type VigilErrorCode } from '../errors/vigil-error.ts';

const sleeper = new Int32Array(new SharedArrayBuffer(4));

export function withFileLock<T>(lock: string, code: VigilErrorCode, body: () => T): T {
  const deadline = Date.now() + 10_000;
  let fd: number | null = null;
  while (fd === null) {
    try {
      fd = openSync(lock, 'wx', 0o600);
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 30_000) rmSync(lock, { force: true });
      } catch {
        // removed meanwhile
      }
      if (Date.now() > deadline) throw new VigilError(code, `locked by another process for over 10 s (${lock})`);
      Atomics.wait(sleeper, 0, 0, 20);
    }
  }
  try {
    return body();
  } finally {
    closeSync(fd);
    rmSync(lock, { force: true });
  }
}
