// Starts `vigil serve` as its own process on a free loopback port and reads
// its memory through the admin snapshot (after a full collection on request).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtCli } from './built.ts';
import { client, json, type Requester } from './http.ts';

export const adminToken = 'bench-admin';
const gcOnSignal = fileURLToPath(new URL('../profiles/gc-on-signal.cjs', import.meta.url));

export interface BenchServer {
  readonly base: string;
  readonly pid: number;
  readonly transport: string;
  readonly request: Requester;
  rss(): Promise<number>;
  /** The admin snapshot's memory figures and resident actor counts. */
  memory(): Promise<{ rss: number; heapUsed: number; residentSubscriptions: number }>;
  /** The same right after a full collection in the server, so that it is live memory, not garbage. */
  liveMemory(): Promise<{ rss: number; heapUsed: number; residentSubscriptions: number }>;
  /** CPU seconds (user + system) the server process has used so far. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

export interface ServerSpec {
  readonly transport: 'uws' | 'node';
  /** Keep state in a file (durable, the default synchronous setting). */
  readonly durable: boolean;
  /** Extra node flags for the server process (e.g. --cpu-prof). */
  readonly nodeFlags?: readonly string[];
  /** Extra `vigil serve` flags (e.g. --inspect). */
  readonly args?: readonly string[];
}

export async function startServer(spec: ServerSpec): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-'));
  const nodeFlags = spec.nodeFlags ?? [];
  const args = [
    ...nodeFlags,
    // SIGUSR2 runs a full collection (see liveMemory), unless the caller set that up itself.
    ...(nodeFlags.includes('--expose-gc') ? [] : ['--expose-gc', '--require', gcOnSignal]),
    // The compiled server, as `npm start` and an installed `vigil` run it (see built.ts).
    builtCli(),
    'serve',
    '--port',
    '0',
    '--transport',
    spec.transport,
    `--allow-admin=${adminToken}`,
    ...(spec.durable ? ['--state', join(dir, 'state.db')] : []),
    ...(spec.args ?? []),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: process.cwd() });
  let errors = '';
  child.stderr!.on('data', (c: Buffer) => {
    errors = (errors + c.toString()).slice(-4000);
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const match = /serving the monitor protocol at (\S+) \(transport (\w+)/.exec(out);
      if (match) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(`${match[1]} ${match[2]}`);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before serving: ${errors}`)));
  });
  const [base, transport] = line.split(' ') as [string, string];
  if (transport !== spec.transport) throw new Error(`asked for transport ${spec.transport}, the server runs ${transport}`);
  const request = client(base, 8);
  const memory = async () => {
    const snap = await json<{ memory: { rss_bytes: number; heap_used_bytes: number }; resident_actors: { subscriptions: number } }>(
      request,
      'GET',
      '/admin/snapshot',
      undefined,
      adminToken,
    );
    return { rss: snap.memory.rss_bytes, heapUsed: snap.memory.heap_used_bytes, residentSubscriptions: snap.resident_actors.subscriptions };
  };
  return {
    base,
    pid: child.pid!,
    transport,
    request,
    async rss() {
      const snap = await json<{ memory: { rss_bytes: number } }>(request, 'GET', '/admin/snapshot', undefined, adminToken);
      return snap.memory.rss_bytes;
    },
    memory,
    async liveMemory() {
      process.kill(child.pid!, 'SIGUSR2');
      await new Promise((r) => setTimeout(r, 500));
      return memory();
    },
    cpuSeconds: () => cpuSecondsOf(child.pid!),
    stop: () => stopChild(child, dir),
  };
}

/** utime + stime from /proc/<pid>/stat, in seconds (Linux; clock ticks of 1/100 s). */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

async function stopChild(child: ChildProcess, dir: string): Promise<void> {
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(dir, { recursive: true, force: true });
}
