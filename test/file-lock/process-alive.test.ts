// A run's or a slot's owner is alive while its process runs: a runner killed
// with -9 and not yet reaped (a zombie) is not, or its slots and its run would
// stay taken for as long as its parent fails to reap it (for ever under a
// container's init that never does).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { processAlive } from '../../src/file-lock/process-alive.ts';
import { spawnChild } from '../support/children.ts';
import { untilTrue } from '../support/until.ts';

const state = (pid: number): string => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return 'gone';
  }
};

describe.skipIf(process.platform !== 'linux')('processAlive', () => {
  it('is false for an exited process nobody has reaped, true for one that runs', async ({ onTestFinished }) => {
    // The shell starts a child that exits a second later, and at once becomes `sleep`, which never waits for it:
    // a zombie. (A child that exits at once may be reaped by the shell itself before its exec.)
    const parent = spawnChild('sh', ['-c', '(sleep 1; exit 0) & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    onTestFinished(() => {
      parent.kill('SIGKILL');
    });
    const zombie = await new Promise<number>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
    await untilTrue('the child to exit unreaped', () => state(zombie) === 'Z');
    expect(processAlive(zombie)).toBe(false);
    expect(processAlive(parent.pid!)).toBe(true);
    expect(processAlive(process.pid)).toBe(true);
  });
});
