// `vigil watch` against a real server: escaping, the stored cursor, a reader
// that goes away, --once with --wait, and giving up on an absent server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createMonitor, subscribe } from '../support/client.ts';
import { repoRoot, type ServerProcess, stablePort, startServerProcess, vigilArgs } from '../support/server-process.ts';
import { spawnChild } from '../support/children.ts';
import { scaled } from '../support/time-scale.ts';

let server: ServerProcess;
beforeAll(async () => {
  server = await startServerProcess();
});
afterAll(() => server.stop());

/** Runs the CLI without blocking this process: a blocked event loop would reuse keep-alive sockets the server has closed. */
function vigil(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawnChild(process.execPath, vigilArgs(args), { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('close', (status) => done({ status, stdout, stderr }));
  });
}

async function fixture(subjects: Array<string | null>) {
  const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
  for (const subject of subjects) {
    await call(server.base, 'POST', `/monitors/${id}/observations`, { token: ownerToken, body: { type: 'demo.n', subject, data: { pad: 'x'.repeat(300) } } });
  }
  const sub = await subscribe(server.base, { monitor: id, subscriber: 'agent:w', filter: { types: 'demo.*' } });
  const args = ['watch', '--base', server.url, '--subscription', sub.id, '--token', sub.token];
  const storedCursor = async () => (await call(server.base, 'GET', `/subscriptions/${sub.id}/pull?limit=1`, { token: sub.token })).body.cursor as number;
  const subscribedRecords = async () => {
    const reader = await subscribe(server.base, { monitor: id, subscriber: `agent:r${Math.random()}` });
    const page = await call(server.base, 'GET', `/subscriptions/${reader.id}/pull?limit=1000&types=ai.vigil.monitor.subscribed`, { token: reader.token });
    return (page.body.observations as Array<{ data: { payload: { subscription: string } } }>).filter((o) => o.data.payload.subscription === sub.id).length;
  };
  return { id, ownerToken, sub, args, storedCursor, subscribedRecords };
}

describe('vigil watch', () => {
  it('escapes what publishers wrote: a newline in a subject cannot forge a line', async () => {
    const forged = 'job-1\n999 demo.fake ok tier=src origin=human actor=human:admin {}';
    const f = await fixture([forged, 'plain-subject', 'with space']);
    const r = await vigil([...f.args, '--catch-up', '--once', '--wait', '0']);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain(JSON.stringify(forged));
    expect(lines[1]).toMatch(new RegExp(`^\\d+ demo\\.n plain-subject tier=unverified origin=agent actor=agent:owner monitor=${f.id} time=\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\{`));
    expect(lines[2]).toContain(' "with space" ');
  }, scaled(120_000));

  it('without --catch-up it neither moves the stored cursor nor writes a subscribed record', async () => {
    const f = await fixture(['a', 'b']);
    const before = { cursor: await f.storedCursor(), records: await f.subscribedRecords() };
    for (let i = 0; i < 2; i++) {
      const r = await vigil([...f.args, '--once', '--wait', '0']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('stay unacknowledged (--catch-up prints them)');
    }
    expect(await f.storedCursor()).toBe(before.cursor);
    expect(await f.subscribedRecords()).toBe(before.records);
    const caught = await vigil([...f.args, '--catch-up', '--once', '--wait', '0']);
    expect(caught.stdout.split('\n').filter(Boolean).map((l) => l.split(' ')[2])).toEqual(['a', 'b']);
  }, scaled(120_000));

  it('a reader that stops reading (watch | head) ends it quietly, acknowledging no more than was written', async () => {
    const f = await fixture(Array.from({ length: 400 }, (_, i) => `s${i}`));
    const child = spawnChild('sh', ['-c', `"${process.execPath}" ${vigilArgs([...f.args, '--catch-up', '--wait', '1']).map((a) => `'${a}'`).join(' ')} | head -n 3`], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    await new Promise((done) => child.once('exit', done));
    expect(out.split('\n').filter((l) => / demo\.n /.test(l))).toHaveLength(3);
    expect(err).toBe('');
    // Four hundred lines of ~600 bytes cannot all have gone into a pipe nobody reads.
    const head = (await call(server.base, 'GET', `/monitors/${f.id}`)).body.head as number;
    expect(await f.storedCursor()).toBeLessThan(head);
  }, scaled(90_000));

  it('--once waits up to --wait for the first observation', async () => {
    const f = await fixture([]);
    const child = spawnChild(process.execPath, vigilArgs([...f.args, '--catch-up', '--once', '--wait', '30']), { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((done) => child.once('exit', done));
    // Give the watcher time to begin its pull (a watcher that ignored --wait has exited by then).
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    await call(server.base, 'POST', `/monitors/${f.id}/observations`, { token: f.ownerToken, body: { type: 'demo.late', subject: 'late' } });
    expect(await exited).toBe(0);
    expect(out).toContain(' demo.late late ');
  }, scaled(60_000));

  it('--retry-for gives up with exit 3 (server unreachable) when the server stays unreachable', async () => {
    const port = await stablePort();
    const r = await vigil(['watch', '--base', `http://127.0.0.1:${port}`, '--subscription', 'sub-x', '--token', 'vgs_x', '--retry-for', '1']);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('retrying for 1 s');
    expect(r.stderr).toContain(`gave up after 1 s: cannot reach http://127.0.0.1:${port}/mp/v0`);
    const bad = await vigil(['watch', '--subscription', 'sub-x', '--token', 'vgs_x', '--retry-for', 'soon']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--retry-for');
  }, scaled(120_000));
});
