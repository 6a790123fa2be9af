// Every process a test starts goes through spawnChild, so that whatever a
// test leaves running when it fails, times out or forgets is stopped after
// its file (test/support/cleanup.ts) — together with the processes it
// started in turn (a shell's pipeline, `script`'s command, a server's workerd).
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const running = new Set<ChildProcess>();

function track<T extends ChildProcess>(child: T): T {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** `spawn`, with the same overloads, recording the child for stopChildren(). */
export const spawnChild = ((...args: Parameters<typeof spawn>) => track(spawn(...args))) as typeof spawn;

/** The pids below `root` in the process tree (Linux; elsewhere none are found). */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name is in parentheses and may hold spaces: read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(root);
  return found;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/**
 * Stops every child still running and everything below it: SIGKILL, since a
 * test that got here without stopping its process has no use for a graceful
 * end. Returns a line per child it had to stop.
 */
export async function stopChildren(): Promise<string[]> {
  const stopped: string[] = [];
  const waits: Promise<unknown>[] = [];
  for (const child of running) {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) continue;
    stopped.push(`${child.pid} ${child.spawnargs.join(' ').slice(0, 200)}`);
    const below = descendants(child.pid);
    waits.push(new Promise((done) => child.once('exit', done)));
    signal(child.pid, 'SIGKILL');
    for (const pid of below) signal(pid, 'SIGKILL');
  }
  await Promise.all(waits);
  running.clear();
  return stopped;
}

/**
 * Resolves once `child` has exited and what it printed has been read: its pipes are read to their end ('close').
 * A process it started can hold them open after it exits (a server's workerd): then at most `graceMs` after its exit.
 */
export function endOf(child: ChildProcess, graceMs = 2_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((done) => {
    child.once('close', (code, signal) => done({ code, signal }));
    child.once('exit', (code, signal) => setTimeout(() => done({ code, signal }), graceMs).unref());
  });
}
