// Issue 15 point 8: a second `vigil serve` on a port already served must not
// start (uWebSockets.js would share it through SO_REUSEPORT and split the
// traffic): it exits 1 naming the port and the process holding it. Any
// failed listen says why.
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, type ServerProcess, startServerProcess, stablePort, tempDir, transports, vigilArgs } from '../support/server-process.ts';
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

  it('a refused serve leaves no --state file behind (nor its folder)', async () => {
    const state = join(tempDir(), 'new', 'monitors.db');
    const run = await runServe(['--port', String(server.port), '--transport', first, '--state', state]);
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/already in use/);
    expect(existsSync(dirname(state))).toBe(false);
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

describe('the edge port', () => {
  it('given and taken: serve refuses, naming --edge-port', async () => {
    const holder = await startServerProcess({ port: await stablePort() });
    try {
      const run = await runServe(['--port', String(await stablePort()), '--edge-port', String(holder.port)]);
      expect(run.code, run.output).toBe(1);
      expect(run.output).toContain(`port ${holder.port}`);
      expect(run.output).toContain(`pid ${holder.child.pid}`);
      expect(run.output).toMatch(/choose another --edge-port/);
    } finally {
      await holder.stop();
    }
  }, scaled(60_000));

  it('the default (8787) taken: serve starts on a free edge port and says so', async () => {
    // Whoever holds 8787 (this test's listener or another program), the server must start.
    const blocker = createServer();
    await new Promise<void>((done) => blocker.once('error', () => done()).listen(8787, '127.0.0.1', () => done()));
    const child = spawnChild(process.execPath, vigilArgs(['serve', '--port', String(await stablePort())]), { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let output = '';
      const started = await new Promise<boolean>((done) => {
        const read = (d: Buffer) => {
          output += d;
          if (/serving the monitor protocol/.test(output)) done(true);
        };
        child.stdout.on('data', read);
        child.stderr.on('data', read);
        child.once('exit', () => done(false));
      });
      expect(started, output).toBe(true);
      expect(output).toMatch(/the edge's default port 8787 is taken .*; edge workers answer on port \d+ instead/);
      expect(output).not.toMatch(/edge workers at http:\/\/<name>\.localhost:8787\//);
    } finally {
      child.kill('SIGTERM');
      await new Promise((done) => (child.exitCode === null ? child.once('exit', done) : done(undefined)));
      await new Promise((done) => blocker.close(done));
    }
  }, scaled(60_000));
});
