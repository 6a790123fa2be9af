// Issue 15 point 8: a second `vigil serve` on a port already served must not
// start (uWebSockets.js would share it through SO_REUSEPORT and split the
// traffic): it exits 1 naming the port and the process holding it. Any
// failed listen says why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, type ServerProcess, startServerProcess, stablePort, transports, vigilArgs } from '../support/server-process.ts';
import { spawnChild } from '../support/children.ts';
import { scaled } from '../support/time-scale.ts';

function runServe(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawnChild(process.execPath, vigilArgs(['serve', ...args]), { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    // A server that did start is stopped: the test then fails on its exit code and output.
    const timer = setTimeout(() => child.kill('SIGTERM'), 15_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

describe.each(transports)('a port already served, first server on %s', (first) => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({ transport: first, port: await stablePort() });
  });
  afterAll(() => server?.stop());

  it.each(transports)('a second serve over %s refuses, naming the port and the holder', async (second) => {
    const run = await runServe(['--port', String(server.port), '--transport', second]);
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain(`port ${server.port}`);
    expect(run.output).toMatch(/already in use/);
    expect(run.output).toContain(`pid ${server.child.pid}`);
    expect(run.output).not.toMatch(/serving the monitor protocol/);
  }, scaled(30_000));
});

describe('a listen that fails for another reason', () => {
  it.each(transports)('says why over %s', async (transport) => {
    const run = await runServe(['--port', String(await stablePort()), '--host', '192.0.2.1', '--transport', transport]);
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/192\.0\.2\.1/);
    expect(run.output).toMatch(/not an address of this machine|EADDRNOTAVAIL/);
  }, scaled(30_000));
});
