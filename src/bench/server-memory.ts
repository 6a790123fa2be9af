// The memory of a server process that runs on this machine (--pid): its
// resident set from /proc, read before the streams open and once they are.
import { readFileSync } from 'node:fs';
import { BenchSetupError } from './setup.ts';

/** Resident set size of `pid` in bytes (Linux /proc). */
export function residentBytes(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    throw new BenchSetupError(`--pid ${pid}: no such process on this machine (its memory is read from /proc/${pid}/status); leave --pid out for a server elsewhere.`);
  }
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1]);
  if (!Number.isFinite(kb)) throw new BenchSetupError(`--pid ${pid}: /proc/${pid}/status has no VmRSS line (a kernel thread or a zombie?).`);
  return kb * 1024;
}
