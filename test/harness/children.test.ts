// The harness itself: what a failed test leaves running is stopped after its
// file, including what that process started in turn.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { spawnChild, stopChildren } from '../support/children.ts';

/** Running, not gone and not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function gone(pid: number): Promise<boolean> {
  while (alive(pid)) await new Promise((r) => setTimeout(r, 20));
  return true;
}

describe.skipIf(process.platform !== 'linux')('stopChildren', () => {
  it('stops a forgotten child and the processes it started', async () => {
    const shell = spawnChild('sh', ['-c', 'sleep 300 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const grandchild = await new Promise<number>((done) => shell.stdout!.once('data', (b: Buffer) => done(Number(String(b).trim()))));
    expect(alive(grandchild)).toBe(true);

    const stopped = await stopChildren();

    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toContain('sleep 300');
    expect(shell.signalCode).toBe('SIGKILL');
    expect(await gone(grandchild)).toBe(true);
  });

  it('leaves alone what has already exited', async () => {
    const done = spawnChild('true', [], { stdio: 'ignore' });
    await new Promise((r) => done.once('exit', r));
    expect(await stopChildren()).toEqual([]);
  });
});
