// Only one server may write a state file: a lock file beside it names the
// holder's pid. A lock left by a process that no longer runs is taken over.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { processAlive } from '../file-lock/process-alive.ts';

export class StateLockedError extends Error {
  override readonly name = 'StateLockedError';
  constructor(readonly path: string, readonly holderPid: number) {
    super(`the state file ${path} is in use by another Vigil server (pid ${holderPid}); stop it or choose another --state file`);
  }
}


export interface StateLock {
  release(): void;
}

export function lockStateFile(statePath: string): StateLock {
  const lockPath = `${statePath}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            if (Number(readFileSync(lockPath, 'utf8').trim()) === process.pid) unlinkSync(lockPath);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let holder = Number.NaN;
      try {
        holder = Number(readFileSync(lockPath, 'utf8').trim());
      } catch {
        continue;
      }
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
        throw new StateLockedError(statePath, holder);
      }
      try {
        unlinkSync(lockPath);
      } catch {
        // Another starter removed it first; try again.
      }
    }
  }
  throw new Error(`could not lock ${statePath}: the lock file ${lockPath} keeps changing`);
}
