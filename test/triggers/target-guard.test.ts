// The guard a trigger's target runs under (src/recipes/process/guard-shell.ts), over real shells: a lease's
// timer stops a target that outlives it, and leaves nothing behind when the target ends first.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { targetGuard } from '../../src/recipes/process/guard-shell.ts';
import { endOf, spawnChild } from '../support/children.ts';
import { scaled } from '../support/time-scale.ts';
import { until } from '../support/until.ts';

/** The processes of process group `pgid` (Linux). */
function members(pgid: number): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') found.push(`${entry} ${readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 80)}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function guarded(target: string) {
  // As the target runner starts it: a group of its own, the lease's seconds left written on its stdin.
  return spawnChild('sh', ['-c', targetGuard, 'vigil-guard', 'sh', '-c', target], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
}

function stopGroup(pgid: number | undefined): void {
  try {
    if (pgid) process.kill(-pgid, 'SIGKILL');
  } catch {
    // already empty
  }
}

describe.skipIf(process.platform !== 'linux')('the guard of a fenced target', () => {
  it('leaves no timer behind when the target ends before its lease, renewed or not, even if nobody stops its group after', async () => {
    const child = guarded('sleep 0.3; echo done');
    try {
      // Renewals one right after another: each disarms a timer that may not have set its trap yet (under load
      // one in twenty such timers once left its sleep in the group).
      for (let seconds = 300; seconds < 320; seconds++) child.stdin!.write(`${seconds}\n`);
      expect(await endOf(child)).toEqual({ code: 0, signal: null });
      // No wait on a clock for what should be gone: only a limit on how long its going may take.
      const left = await until('the group to empty', () => (members(child.pid!).length === 0 ? [] : undefined), scaled(5_000)).catch(() => members(child.pid!));
      expect(left).toEqual([]);
    } finally {
      stopGroup(child.pid);
    }
  });

  it('stops a target that ignores SIGTERM once its lease runs out: SIGTERM, then SIGKILL', async () => {
    const child = guarded("trap '' TERM; sleep 60");
    try {
      child.stdin!.write('0.5\n');
      const end = await endOf(child);
      expect(end.signal).toBe('SIGTERM');
      const left = await until('the group to empty', () => (members(child.pid!).length === 0 ? [] : undefined), scaled(10_000)).catch(() => members(child.pid!));
      expect(left).toEqual([]);
    } finally {
      stopGroup(child.pid);
    }
  });
});
