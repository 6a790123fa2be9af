// Everything a supervised program started, including what escaped its
// process group with setsid (and double-forked to be reparented to init):
// its session, its descendants by parent pid, and every process carrying
// its marker in the environment (VIGIL_SUPERVISOR, which setsid and
// daemonising keep). Read from /proc; on systems without it, only the group
// is known.
import { readdirSync, readFileSync } from 'node:fs';

export const supervisorVar = 'VIGIL_SUPERVISOR';

interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** Clock ticks after boot when the process started. */
  started: number;
}

// Linux's USER_HZ: /proc reports start times in these ticks.
const ticksPerSecond = 100;

/**
 * Now, in /proc's start-time ticks, a tick early. A process started after this call has a start time
 * at or past it; older ones cannot carry a marker made after it, so their environments need no reading.
 */
export function ticksSinceBoot(): number {
  try {
    return Math.floor(Number(readFileSync('/proc/uptime', 'latin1').split(' ')[0]) * ticksPerSecond) - 1;
  } catch {
    return 0;
  }
}

/** This process's own start time: every program of this vigil process started after it. */
export function ownStartTicks(): number {
  return procInfo(process.pid)?.started ?? 0;
}

function procInfo(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return undefined;
    return { pid, ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]), started: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .map(Number);
  } catch {
    return [];
  }
}

function carriesMarker(pid: number, marker: string, prefix: boolean): boolean {
  try {
    const needle = `${supervisorVar}=${marker}`;
    return readFileSync(`/proc/${pid}/environ`, 'latin1')
      .split('\0')
      .some((entry) => (prefix ? entry.startsWith(needle) : entry === needle));
  } catch {
    return false;
  }
}

/**
 * The processes that belong to the program started as `leader` with `marker`:
 * its group and session, their descendants, and the marked ones. A marker
 * given as a prefix (`run:`) takes every program of a run. `bornAfter` (ticks
 * since boot, from before the marker was handed out) spares reading the
 * environment of every older process on the machine: on a busy one that was
 * most of what a step's end cost.
 */
export function processTree(leader: number | null, marker: string, prefix = false, bornAfter = 0): number[] {
  const self = process.pid;
  const infos = allPids()
    .filter((pid) => pid !== self)
    .map(procInfo)
    .filter((i): i is ProcInfo => i !== undefined);
  const found = new Set<number>();
  for (const i of infos) {
    if (leader !== null && (i.pid === leader || i.pgid === leader || i.sid === leader)) found.add(i.pid);
    else if (i.started >= bornAfter && carriesMarker(i.pid, marker, prefix)) found.add(i.pid);
  }
  // Descendants of anything found so far (children that cleared their environment).
  const children = new Map<number, number[]>();
  for (const i of infos) children.set(i.ppid, [...(children.get(i.ppid) ?? []), i.pid]);
  const queue = [...found];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (!found.has(child)) {
        found.add(child);
        queue.push(child);
      }
    }
  }
  found.delete(self);
  return [...found];
}

/** Sends `signal` to every process of the tree; returns how many it reached. */
export function signalTree(leader: number | null, marker: string, signal: NodeJS.Signals, prefix = false, bornAfter = 0): number {
  let reached = 0;
  if (leader !== null) {
    try {
      process.kill(-leader, signal);
      reached++;
    } catch {
      // the group is gone
    }
  }
  for (const pid of processTree(leader, marker, prefix, bornAfter)) {
    try {
      process.kill(pid, signal);
      reached++;
    } catch {
      // already gone
    }
  }
  return reached;
}

/** SIGTERM the tree, SIGKILL what is left after `graceMs`. */
export async function terminateTree(leader: number, marker: string, graceMs: number, bornAfter = 0): Promise<void> {
  if (signalTree(leader, marker, 'SIGTERM', false, bornAfter) === 0) return;
  const until = Date.now() + graceMs;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    if (processTree(leader, marker, false, bornAfter).length === 0) return;
  }
  signalTree(leader, marker, 'SIGKILL', false, bornAfter);
}

/** The marker prefix every program of this vigil process carries. */
export const runMarkerPrefix = (): string => `${process.pid}:`;
