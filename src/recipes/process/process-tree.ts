// Everything a supervised program started, including what escaped its
// process group with setsid (and double-forked to be reparented to init):
// its session, its descendants by parent pid, and every process carrying
// its marker in the environment (VIGIL_SUPERVISOR, which setsid and
// daemonising keep). Read from /proc; on systems without it, only the group
// is known.
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';

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

// One buffer for every /proc read of this thread: readFileSync on a /proc file
// (size 0) allocates and grows buffers, several times the cost of the read.
let buffer = Buffer.allocUnsafe(4096);

/** The whole text of a small /proc file, or undefined when the process is gone. */
function readProc(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(buffer.length)]);
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) return buffer.toString('latin1', 0, length);
      length += n;
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function procInfo(pid: number): ProcInfo | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z') return undefined;
  return { pid, ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]), started: Number(fields[19]) };
}

function allPids(): number[] {
  try {
    const pids: number[] = [];
    for (const name of readdirSync('/proc')) {
      const pid = Number(name);
      if (Number.isInteger(pid) && pid > 0) pids.push(pid);
    }
    return pids;
  } catch {
    return [];
  }
}

// Every process on the machine, read once per turn of the event loop: steps
// whose programs ended together (a wide run's wave) share one pass over /proc.
let snapshot: ProcInfo[] | null = null;

function processes(): ProcInfo[] {
  if (snapshot) return snapshot;
  const self = process.pid;
  const infos: ProcInfo[] = [];
  for (const pid of allPids()) {
    if (pid === self) continue;
    const info = procInfo(pid);
    if (info) infos.push(info);
  }
  snapshot = infos;
  setImmediate(() => {
    snapshot = null;
  }).unref();
  return infos;
}

// The VIGIL_SUPERVISOR values of each process by pid and start time: a
// process's environment is read once, not again at every step's end while it
// lives (a wide run's siblings are all younger than each step's start).
const markers = new Map<number, { started: number; values: string[] }>();

function markersOf(info: ProcInfo): string[] {
  const known = markers.get(info.pid);
  if (known && known.started === info.started) return known.values;
  const environ = readProc(`/proc/${info.pid}/environ`);
  if (environ === undefined) return [];
  const prefix = `${supervisorVar}=`;
  const values = environ
    .split('\0')
    .filter((entry) => entry.startsWith(prefix))
    .map((entry) => entry.slice(prefix.length));
  // A child of this process may not have reached its exec yet (it still shows this process's environment).
  if (info.ppid === process.pid) return values;
  if (markers.size > 10_000) markers.clear();
  markers.set(info.pid, { started: info.started, values });
  return values;
}

function carriesMarker(info: ProcInfo, marker: string, prefix: boolean): boolean {
  return markersOf(info).some((value) => (prefix ? value.startsWith(marker) : value === marker));
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
  const infos = processes();
  const found = new Set<number>();
  for (const i of infos) {
    if (leader !== null && (i.pid === leader || i.pgid === leader || i.sid === leader)) found.add(i.pid);
    else if (i.started >= bornAfter && carriesMarker(i, marker, prefix)) found.add(i.pid);
  }
  // Descendants of anything found so far (children that cleared their environment).
  const children = new Map<number, number[]>();
  for (const i of infos) {
    const siblings = children.get(i.ppid);
    if (siblings) siblings.push(i.pid);
    else children.set(i.ppid, [i.pid]);
  }
  const queue = [...found];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (!found.has(child)) {
        found.add(child);
        queue.push(child);
      }
    }
  }
  found.delete(process.pid);
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
