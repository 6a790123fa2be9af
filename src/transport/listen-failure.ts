// Why a listen failed, in words a person can act on: the port's holder when
// it is taken (found through /proc on Linux), otherwise what the system said.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';

const reasons: Record<string, string> = {
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'is not an address of this machine',
  EINVAL: 'is not a valid listening address',
  ENOTFOUND: 'is not a known host name',
};

/** The system's error code for listening on host:port right now (undefined when it would succeed). */
export function probeListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => done(undefined)));
  });
}

/** The message for a listen that failed with `code`. */
export function listenFailure(host: string, port: number, code: string | undefined, portFlag = '--port'): Error {
  if (code === 'EADDRINUSE') {
    const holder = portHolder(port);
    return Object.assign(new Error(`port ${port} on ${host} is already in use by ${holder ?? 'another process'}; stop it or choose another ${portFlag}`), { code });
  }
  const reason = code ? (reasons[code] ?? `the system refused (${code})`) : 'the socket library gave no reason';
  return new Error(`cannot listen on ${host} port ${port}: ${host} ${reason}${code && reasons[code] ? ` (${code})` : ''}`);
}

/** "pid N (command line)" of the process listening on `port`, when /proc shows it. */
export function portHolder(port: number): string | undefined {
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
  if (inodes.size === 0) return undefined;
  for (const pid of safeList('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    for (const fd of safeList(`/proc/${pid}/fd`)) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (inodes.has(target)) return `pid ${pid} (${commandLine(pid)})`;
    }
  }
  return undefined;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function commandLine(pid: string): string {
  try {
    const words = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const text = words.join(' ');
    // The end says the most (the command and its flags): keep the program and the tail.
    return text.length > 160 ? `${words[0]} … ${text.slice(-120)}` : text || 'unknown command';
  } catch {
    return 'unknown command';
  }
}
