// How many workerd runtimes the managed edge keeps running (issue 42): each
// is a process of tens of MB (20 trivial workers of one key held 908 MB, for
// good). Runtimes idle for long are stopped; a key and the whole server may
// run only so many at once, and all of them together stay within a memory
// budget. Room for a new one is made by stopping the least recently used
// idle runtimes; when only busy ones stand in the way the start is refused.
// Pure bookkeeping: the caller stops what it is told to.

export interface RuntimeCaps {
  /** Runtimes one API key may have running at once. */
  readonly perKey: number;
  /** Runtimes the server runs at once, every key together. */
  readonly perServer: number;
  /** A runtime that answered nothing for this long is stopped (it starts again on its next use). */
  readonly idleMs: number;
  /** Resident memory of every workerd together. */
  readonly memoryBytes: number;
}

export const defaultRuntimeCaps: RuntimeCaps = { perKey: 4, perServer: 16, idleMs: 10 * 60_000, memoryBytes: 1024 << 20 };

/** A runtime about to start is counted at this until its memory is read (an idle workerd holds about 45 MB). */
export const startingRuntimeBytes = 64 << 20;

/** What the bookkeeping needs to know of one running runtime. */
export interface RuntimeUse {
  readonly name: string;
  readonly keyId: string;
  /** Requests and scheduled runs in progress. */
  readonly busy: number;
  readonly lastUsedMs: number;
  readonly residentBytes: number;
}

const mb = (bytes: number) => Math.round(bytes / (1 << 20));

/**
 * The runtimes to stop so that `keyId` may start one more, least recently used
 * idle ones first; or why it may not, when busy runtimes fill the room.
 */
export function makeRoom(running: readonly RuntimeUse[], keyId: string, caps: RuntimeCaps): { stop: string[] } | { refused: string } {
  const idle = running.filter((r) => r.busy === 0).sort((a, b) => a.lastUsedMs - b.lastUsedMs);
  const stop = new Set<string>();
  const left = () => running.filter((r) => !stop.has(r.name));
  const evict = (which: (r: RuntimeUse) => boolean) => {
    const victim = idle.find((r) => !stop.has(r.name) && which(r));
    if (victim) stop.add(victim.name);
    return victim !== undefined;
  };
  while (left().filter((r) => r.keyId === keyId).length >= caps.perKey) {
    if (!evict((r) => r.keyId === keyId)) {
      return { refused: `this API key already has ${caps.perKey} workers running, all answering requests (the most one key may run at once)` };
    }
  }
  while (left().length >= caps.perServer) {
    if (!evict(() => true)) return { refused: `the edge already runs ${caps.perServer} workers, all answering requests (the most it runs at once)` };
  }
  const resident = () => left().reduce((sum, r) => sum + r.residentBytes, 0);
  while (left().length > 0 && resident() + startingRuntimeBytes > caps.memoryBytes) {
    if (!evict(() => true)) {
      return { refused: `the running workers hold ${mb(resident())} MB, and one more would pass the edge's memory budget of ${mb(caps.memoryBytes)} MB` };
    }
  }
  return { stop: [...stop] };
}

/** Idle runtimes to stop: those unused for `idleMs`, then the least recently used while all of them pass the memory budget. */
export function overBounds(running: readonly RuntimeUse[], nowMs: number, caps: RuntimeCaps): string[] {
  const idle = running.filter((r) => r.busy === 0).sort((a, b) => a.lastUsedMs - b.lastUsedMs);
  const stop = idle.filter((r) => nowMs - r.lastUsedMs >= caps.idleMs).map((r) => r.name);
  let resident = running.reduce((sum, r) => sum + r.residentBytes, 0);
  for (const r of running) if (stop.includes(r.name)) resident -= r.residentBytes;
  for (const r of idle) {
    if (resident <= caps.memoryBytes) break;
    if (stop.includes(r.name)) continue;
    stop.push(r.name);
    resident -= r.residentBytes;
  }
  return stop;
}
