// A state file that cannot be used (§16, issue 4 point 4): corrupt or
// read-only gives a clear error at start (exit 1, naming the file); a disk
// that fills up while serving gives 503 STORE_UNAVAILABLE, never a 2xx for a
// write that was not stored, and the restarted server has every 2xx write.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { repoRoot, stablePort, startServerProcess, tempDir, transports, vigilArgs } from '../support/server-process.ts';
import { readAll } from './support.ts';
import { endOf, spawnChild } from '../support/children.ts';

const isRoot = process.getuid?.() === 0;
const nobody = 65534;

/** Runs `vigil serve` on `state` until it exits (or 15 s); as nobody when we are root, so that file modes apply. */
function serveUntilExit(state: string, asNobody = false): Promise<{ code: number | null; output: string }> {
  const args = vigilArgs(['serve', '--port', '0', '--state', state]);
  const [command, argv] =
    asNobody && isRoot
      ? ['setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, ...args]]
      : [process.execPath, args];
  return new Promise((resolve) => {
    // No tsx compile cache for nobody: it would stay behind in /tmp/tsx-65534.
    const env = { ...process.env, HOME: '/tmp', TSX_DISABLE_CACHE: '1' };
    const child = spawnChild(command, argv, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    void endOf(child).then(({ code }) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** A valid state file with a few monitors, written by a server that stopped cleanly. */
async function validStateFile(dir: string): Promise<string> {
  const state = join(dir, 'state.db');
  const server = await startServerProcess({ state });
  for (let i = 0; i < 5; i++) await createMonitor(server.base, { id: `m-${i}`, description: 'x'.repeat(2000) });
  await server.stop();
  return state;
}

describe('a state file that cannot be used refuses to start, naming the file', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir('vigil-state-faults-');
    chmodSync(dir, 0o755);
  });

  it('random bytes', async () => {
    const state = join(dir, 'random.db');
    writeFileSync(state, randomBytes(16384));
    const { code, output } = await serveUntilExit(state);
    expect(code).toBe(1);
    expect(output).toContain(`cannot start: cannot open the state file ${state}`);
    expect(output).not.toContain('serving the monitor protocol');
  });

  it('a valid header with damaged pages after it', async () => {
    const state = await validStateFile(join(dir, 'damaged'));
    const fd = openSync(state, 'r+');
    writeSync(fd, randomBytes(readFileSync(state).length - 4096), 0, undefined, 4096);
    closeSync(fd);
    const { code, output } = await serveUntilExit(state);
    expect(code).toBe(1);
    expect(output).toMatch(new RegExp(`cannot start: cannot (open|load) the state file ${state}`));
  });

  it('a read-only file (0444)', async () => {
    const sub = join(dir, 'readonly-file');
    const state = await validStateFile(sub);
    chmodSync(state, 0o444);
    if (isRoot) chownSync(sub, nobody, nobody); // the directory is writable for the lock file; only the file is not
    const { code, output } = await serveUntilExit(state, true);
    expect(code).toBe(1);
    expect(output).toContain(`cannot start: cannot open the state file ${state}`);
    expect(output).toMatch(/readonly/);
  });

  it('a read-only directory', async () => {
    const sub = join(dir, 'readonly-dir');
    const state = await validStateFile(sub);
    chmodSync(state, 0o644);
    chmodSync(sub, 0o555);
    const { code, output } = await serveUntilExit(state, true);
    expect(code).toBe(1);
    expect(output).toContain(`cannot start: cannot open the state file ${state}`);
  });
});

// A full disk needs a small file system of its own: a tmpfs, which only root may mount.
const mountPoint = join(tempDir('vigil-full-disk-'), 'mnt');
mkdirSync(mountPoint);
const canMount =
  isRoot && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mountPoint]).status === 0 && spawnSync('umount', [mountPoint]).status === 0;
if (!canMount) console.warn('full-disk test skipped: mounting a small tmpfs needs root (CAP_SYS_ADMIN) and is not possible here');

describe.skipIf(!canMount).each(transports)('a disk that fills up while serving, over %s', (transport) => {
  const mnt = join(mountPoint, transport);
  beforeAll(() => {
    mkdirSync(mnt, { recursive: true });
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=400k', 'tmpfs', mnt]).status).toBe(0);
  });
  afterAll(() => {
    spawnSync('umount', [mnt]);
  });

  // retry: once in four fresh-clone CI runs the disk filled after only 2 acknowledged writes (the precondition below), under load.
  it('answers 503 STORE_UNAVAILABLE once a write cannot be stored, and keeps every 2xx write', { retry: 2 }, async () => {
    // A retry starts on an empty disk again.
    for (const entry of readdirSync(mnt)) rmSync(join(mnt, entry), { recursive: true, force: true });
    const state = join(mnt, 'state.db');
    const port = await stablePort();
    let server = await startServerProcess({ transport, state, port });
    try {
      const m = await createMonitor(server.base, { id: 'filling' });
      const acknowledged: number[] = [];
      let refusal: any;
      for (let i = 0; i < 60 && !refusal; i++) {
        const reply = await publish(server.base, m.id, m.ownerToken, { type: 'app.big', data: { i, fill: randomBytes(15000).toString('base64') } });
        if (reply.status === 201) acknowledged.push(reply.body.seq);
        else {
          expect(reply.status).toBe(503);
          refusal = reply.body;
        }
      }
      expect(refusal, 'the disk never filled up').toBeDefined();
      expect(refusal.code).toBe('STORE_UNAVAILABLE');
      expect(refusal.error).toMatch(/cannot be written/);
      expect(refusal.error).not.toMatch(/rollback/); // the cause is the full disk, not the failed rollback
      expect(acknowledged.length).toBeGreaterThan(2);

      // From now on nothing is answered from memory that the file does not have: writes and reads are refused.
      const small = await publish(server.base, m.id, m.ownerToken, { type: 'app.small' });
      expect(small.status).toBe(503);
      expect((await call(server.base, 'GET', `/monitors/${m.id}`, { token: m.ownerToken })).status).toBe(503);
      expect((await call(server.base, 'POST', '/monitors', { body: {} })).status).toBe(503);
      expect(server.output()).toContain(`cannot write the state file ${state}`);

      // Room again, and a restart: exactly the acknowledged observations are there, with no gap.
      await server.kill();
      expect(spawnSync('mount', ['-o', 'remount,size=8m', mnt]).status).toBe(0);
      server = await startServerProcess({ transport, state, port });
      const reader = await subscribe(server.base, { monitor: m.id, subscriber: 'agent:reader' }, m.ownerToken);
      const seqs = (await readAll(server.base, reader)).filter((o) => o.type === 'app.big').map((o) => Number(o.id));
      expect(seqs).toEqual(acknowledged);
      expect((await publish(server.base, m.id, m.ownerToken, { type: 'app.small' })).status).toBe(201);
    } finally {
      await server.stop();
    }
  });
});
