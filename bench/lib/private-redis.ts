// A redis-server of the bench's own, on a free loopback port with a temporary
// --dir, so that persistence can be set per row (BullMQ with AOF everysec, and
// without) without touching the machine's shared Redis. Stopped and its
// directory removed by stop().
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from './stats.ts';

export interface PrivateRedis {
  readonly port: number;
  /** CPU seconds (user + system) the server has used, from INFO cpu. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export function redisCpuSeconds(port: number): number {
  const info = execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'info', 'cpu'], { encoding: 'utf8' });
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/** `aof`: appendonly yes with appendfsync everysec (the durability BullMQ's docs recommend); otherwise no persistence. */
export async function startPrivateRedis(aof: boolean): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-redis-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no', '--protected-mode', 'yes'];
  args.push(...(aof ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no']));
  const child: ChildProcess = spawn('redis-server', args, { stdio: 'ignore' });
  const ping = () => {
    try {
      return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === 'PONG';
    } catch {
      return false;
    }
  };
  for (let i = 0; i < 100 && !ping(); i++) await sleep(100);
  if (!ping()) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`a private redis-server on port ${port} did not answer`);
  }
  return {
    port,
    cpuSeconds: () => redisCpuSeconds(port),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
