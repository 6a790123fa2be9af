// Starts a real `vigil serve` child process on a free port and stops it.
// Tests talk to it over real sockets, exactly as a user's client would.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endOf, spawnChild } from './children.ts';
import { scaled } from './time-scale.ts';
import { cliEntry, repoRoot } from './cli-entry.ts';

export { cliEntry, repoRoot };

/** Runs the CLI the way a user does, without npm in between. */
export function vigilArgs(args: readonly string[]): string[] {
  return [cliEntry, ...args];
}

export type TransportName = 'uws' | 'node';
export const transports: readonly TransportName[] = ['uws', 'node'];

export interface ServerProcess {
  readonly url: string;
  /** `${url}/mp/v0` */
  readonly base: string;
  readonly port: number;
  readonly child: ChildProcess;
  readonly output: () => string;
  /** Graceful stop (SIGTERM) and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

export interface StartOptions {
  readonly transport?: TransportName;
  readonly state?: string;
  readonly args?: readonly string[];
  readonly env?: Record<string, string>;
  /** Reuse a port (e.g. to restart on the same address). */
  readonly port?: number;
}

/** Folders from tempDir(), removed after each test file by test/support/cleanup.ts. */
export const tempDirs = new Set<string>();

export function tempDir(prefix = 'vigil-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export async function startServerProcess(options: StartOptions = {}): Promise<ServerProcess> {
  const args = ['serve', '--port', String(options.port ?? 0), '--transport', options.transport ?? 'uws'];
  if (options.state) args.push('--state', options.state);
  args.push(...(options.args ?? []));
  // With a fixed --port the edge would take its fixed default (8787), which parallel test files share.
  if (!args.includes('--edge-port') && !args.some((a) => a.startsWith('--edge-port='))) args.push('--edge-port', '0');
  const child = spawnChild(process.execPath, vigilArgs(args), {
    cwd: repoRoot,
    // A server killed with SIGKILL cannot remove its temporary files (miniflare's,
    // for one): they go to a folder of the test's, removed after the file.
    env: { ...process.env, TMPDIR: tempDir('vigil-server-tmp-'), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  // Readiness is the line the server prints once it listens; the limit only
  // turns a hang into a message, and a server that missed it is killed here.
  const startLimit = scaled(20_000);
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`server did not start in ${startLimit / 1000} s (killed):\n${output}`));
    }, startLimit);
    const check = () => {
      const match = /serving the monitor protocol at (http:\/\/[^\s]+)\/mp\/v0/.exec(output);
      if (match) {
        clearTimeout(timer);
        done(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', () => clearTimeout(timer));
    void endOf(child, scaled(2_000)).then(({ code }) => fail(new Error(`server exited with ${code} before serving:\n${output}`)));
  });
  const stopWith = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    url,
    base: `${url}/mp/v0`,
    port: Number(new URL(url).port),
    child,
    output: () => output,
    stop: () => stopWith('SIGTERM'),
    kill: () => stopWith('SIGKILL'),
  };
}

/** A server that can be started again on its port: in memory, the new one knows nothing of what the old one held. */
export interface RestartableServer {
  readonly url: string;
  /** Kills the server (SIGKILL) and starts a new one on the same port; one restart at a time. */
  restart(): Promise<void>;
  kill(): Promise<void>;
}

export async function startRestartableServer(options: Omit<StartOptions, 'port'> = {}): Promise<RestartableServer> {
  const port = await stablePort();
  let server = await startServerProcess({ ...options, port });
  let restarting: Promise<void> | undefined;
  return {
    url: server.url,
    restart() {
      restarting ??= (async () => {
        await server.kill();
        server = await startServerProcess({ ...options, port });
      })();
      return restarting;
    },
    async kill() {
      await restarting?.catch(() => {});
      await server.kill();
    },
  };
}

/**
 * A free port below Linux's ephemeral range. A server restarted on a port
 * inside that range can find it taken: a client retrying connects to the dead
 * port may be given that very port as its own (a TCP self-connect).
 */
export async function stablePort(): Promise<number> {
  const { createServer } = await import('node:net');
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 10000);
    const free = await new Promise<boolean>((done) => {
      const probe = createServer();
      probe.once('error', () => done(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => done(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port between 20000 and 30000');
}
