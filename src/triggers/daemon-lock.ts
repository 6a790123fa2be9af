// One daemon per project: .vigil/daemon.lock names the holder (pid, host,
// start time). A lock whose process no longer runs on this host is taken
// over; a live one is refused naming it.
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../file-lock/process-alive.ts';

export interface DaemonHolder {
  pid: number;
  host: string;
  started: string;
}

export class DaemonRunningError extends Error {
  override readonly name = 'DaemonRunningError';
  constructor(readonly holder: DaemonHolder, lockPath: string) {
    super(`a daemon already runs for this project: pid ${holder.pid} on ${holder.host}, started ${holder.started} (lock ${lockPath}); stop it first`);
  }
}

export function daemonLockPath(projectRoot: string): string {
  return join(projectRoot, '.vigil', 'daemon.lock');
}


/** The daemon holding the project's lock, or null when none runs. */
export function daemonHolder(projectRoot: string): DaemonHolder | null {
  try {
    const holder = JSON.parse(readFileSync(daemonLockPath(projectRoot), 'utf8')) as DaemonHolder;
    if (holder.host === hostname() && !processAlive(holder.pid)) return null;
    return holder;
  } catch {
    return null;
  }
}

export function acquireDaemonLock(projectRoot: string, now: Date = new Date()): { release(): void } {
  const path = daemonLockPath(projectRoot);
  mkdirSync(join(projectRoot, '.vigil'), { recursive: true });
  const me: DaemonHolder = { pid: process.pid, host: hostname(), started: now.toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, `${JSON.stringify(me)}\n`);
      closeSync(fd);
      return {
        release() {
          try {
            if ((JSON.parse(readFileSync(path, 'utf8')) as DaemonHolder).pid === process.pid) unlinkSync(path);
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = daemonHolder(projectRoot);
      if (holder) throw new DaemonRunningError(holder, path);
      try {
        unlinkSync(path); // left by a daemon that died
      } catch {
        // someone else removed it first
      }
    }
  }
  throw new Error(`cannot take the daemon lock ${path}`);
}
