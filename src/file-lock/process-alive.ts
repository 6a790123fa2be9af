// Whether the process a lock names still runs on this machine: signal 0 checks
// without sending anything; EPERM means it runs under another user. A process
// that has exited but not been reaped (a zombie: a runner killed with -9 whose
// parent has not waited for it yet, or whose parent is a container's init that
// never does) still answers signal 0; on Linux its state in /proc says so.
import { readFileSync } from 'node:fs';

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' && !exited(pid);
  }
  return !exited(pid);
}

/** True for a zombie (Z) or dead (X) process on Linux; false where /proc cannot tell. */
function exited(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  // "<pid> (<command, which may hold spaces and parentheses>) <state> …"
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
}
