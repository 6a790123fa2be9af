// `vigil temporal fire` stopped by Ctrl-C or SIGTERM stops its target as the
// target's ttl would (SIGTERM to its process group), records the firing
// failed with what stopped it, and exits 130 or 143. Node's own exit on the
// signal once left the firing recorded running until something reaped it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { processAlive } from '../../src/file-lock/process-alive.ts';
import { spawnChild } from '../support/children.ts';
import { type Scratch, scratchProject, vigil, vigilBin, waitFor } from './helpers.ts';

let s: Scratch;
beforeEach(() => {
  s = scratchProject();
});
afterEach(() => s.cleanup());

for (const [signal, exit] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  it(`${signal}: stops the target, records the firing failed saying so, exits ${exit}`, async () => {
    s.recipe({ name: 'long', type: 'temporal', schedule: '0 3 * * *', mode: 'command', target: 'echo $$ > target.pid; exec sleep 60' });
    const child = spawnChild(process.execPath, [vigilBin, 'temporal', 'fire', 'long'], { cwd: s.root, env: s.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    child.stderr!.on('data', (b: Buffer) => (said += b.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const pid = await waitFor('the target to start', () => existsSync(join(s.root, 'target.pid')) && Number(readFileSync(join(s.root, 'target.pid'), 'utf8')));
    child.kill(signal);
    expect(await exited, said).toBe(exit);
    expect(said).toMatch(new RegExp(`vigil: temporal fire long: stopped by ${signal} \\(run \\S+\\)`));
    // Gone, or a zombie nobody reaps (this container's init does not): either way it runs no more.
    expect(processAlive(pid)).toBe(false);
    const status = JSON.parse(vigil(s, ['temporal', 'status', 'long', '--json']).stdout);
    expect(status.last_firing).toMatchObject({ status: 'failed', reason: `stopped by ${signal}` });
  });
}
