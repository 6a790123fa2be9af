// The memory limit of managed-edge workers. workerd enforces none (one
// worker grew from 47 MB to 2 GB), so each worker's workerd process is
// watched from /proc: past the limit of resident memory it is stopped, and
// what it was answering gets a 502. Linux only; elsewhere nothing is watched.
import { readFileSync } from 'node:fs';
import { listeningProcess } from '../../net/listening-process.ts';
import { workerdChildren } from './workerd-guard.ts';

/** How often resident memory is read: a worker can allocate a few hundred MB a second. */
const sampleMs = 100;
const pageBytes = 4096;

/** The workerd child of this process that listens on `port` (miniflare's entry socket), when /proc shows it. */
export function workerdListeningOn(port: number): number | undefined {
  return listeningProcess(port, workerdChildren(process.pid));
}

function residentBytes(pid: number): number | undefined {
  try {
    // statm: size resident shared ... in pages.
    return Number(readFileSync(`/proc/${pid}/statm`, 'latin1').split(' ')[1]) * pageBytes;
  } catch {
    return undefined;
  }
}

/**
 * Watches processes' resident memory on one timer; `exceeded` is called once per process past the limit,
 * `sampled` with each reading, and `afterSample` once all were read (the edge's budget of all of them together).
 */
export class MemoryWatch {
  private readonly watched = new Map<number, { exceeded: (bytes: number) => void; sampled?: (bytes: number) => void }>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly limitBytes: number,
    private readonly afterSample: () => void = () => {},
  ) {}

  watch(pid: number, exceeded: (bytes: number) => void, sampled?: (bytes: number) => void): () => void {
    this.watched.set(pid, { exceeded, sampled });
    if (!this.timer) {
      this.timer = setInterval(() => this.sample(), sampleMs);
      this.timer.unref();
    }
    return () => this.unwatch(pid);
  }

  private unwatch(pid: number): void {
    this.watched.delete(pid);
    if (this.watched.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private sample(): void {
    for (const [pid, { exceeded, sampled }] of this.watched) {
      const bytes = residentBytes(pid);
      if (bytes === undefined) {
        this.unwatch(pid);
        continue;
      }
      sampled?.(bytes);
      if (bytes > this.limitBytes) {
        this.unwatch(pid);
        exceeded(bytes);
      }
    }
    this.afterSample();
  }
}
