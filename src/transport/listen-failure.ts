// Why a listen failed, in words a person can act on: the port's holder when
// it is taken (found through /proc on Linux), otherwise what the system said.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { listeningProcess, otherProcesses } from '../net/listening-process.ts';

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
  const pid = listeningProcess(port, otherProcesses());
  return pid === undefined ? undefined : `pid ${pid} (${commandLine(pid)})`;
}

function commandLine(pid: number): string {
  try {
    const words = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const text = words.join(' ');
    // The end says the most (the command and its flags): keep the program and the tail.
    return text.length > 160 ? `${words[0]} … ${text.slice(-120)}` : text || 'unknown command';
  } catch {
    return 'unknown command';
  }
}
