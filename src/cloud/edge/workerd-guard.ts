// miniflare starts workerd as a child of the server. A server killed with
// SIGKILL cannot dispose them, and they would run on as orphans holding memory
// and ports. A tiny guard shell, started with the first worker, is told each
// workerd pid on a pipe; when the pipe closes (the server exited, however it
// died) it kills those that are still workerd. Linux only (/proc); elsewhere a
// no-op.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const GUARD = `pids=""
while read -r p; do pids="$pids $p"; done
for p in $pids; do
  [ "$(cat /proc/$p/comm 2>/dev/null)" = workerd ] && kill -KILL "$p" 2>/dev/null
done
exit 0`;

let guard: ChildProcess | undefined;
const guarded = new Set<number>();

/** Hands every workerd child of this process not yet guarded to the guard. */
export function guardWorkerdChildren(): void {
  const children = workerdChildren(process.pid).filter((pid) => !guarded.has(pid));
  if (children.length === 0) return;
  const pipe = guardProcess()?.stdin;
  if (!pipe) return;
  for (const pid of children) {
    guarded.add(pid);
    pipe.write(`${pid}\n`);
  }
}

function guardProcess(): ChildProcess | undefined {
  if (guard) return guard;
  try {
    guard = spawn('sh', ['-c', GUARD, 'vigil-workerd-guard'], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  } catch {
    return undefined;
  }
  guard.on('error', () => {});
  guard.stdin?.on('error', () => {});
  // Neither the guard nor its pipe may keep the server's event loop alive.
  guard.unref();
  (guard.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return guard;
}

export function workerdChildren(parent: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const name of entries) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (comm === 'workerd' && ppid === parent) found.push(Number(name));
    } catch {
      // the process ended while we read
    }
  }
  return found;
}
