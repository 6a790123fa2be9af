// Which process listens on a TCP port, read from /proc (Linux; elsewhere
// nothing is found): the sockets listening on the port, then the first of
// the candidate processes holding one of them open.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The `socket:[inode]` links of the sockets listening on `port`, IPv4 and IPv6. */
function listeningSockets(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== '0A') continue;
      if (Number.parseInt(fields[1]!.split(':')[1] ?? '', 16) === port) inodes.add(`socket:[${fields[9]}]`);
    }
  }
  return inodes;
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The first of `candidates` (pids) holding a socket that listens on `port`. */
export function listeningProcess(port: number, candidates: Iterable<number>): number | undefined {
  const inodes = listeningSockets(port);
  if (inodes.size === 0) return undefined;
  for (const pid of candidates) {
    for (const fd of list(`/proc/${pid}/fd`)) {
      try {
        if (inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return pid;
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return undefined;
}

/** Every process of the machine that /proc shows, but this one. */
export function otherProcesses(): number[] {
  return list('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .map(Number);
}
