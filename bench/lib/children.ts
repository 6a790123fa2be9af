// Load generators run as separate processes so that they never share the
// server's event loop. Protocol on stdio: the child prints "ready", waits for
// "go" on stdin, does its work and prints one JSON line with its result.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface LoadChild<R> {
  readonly ready: Promise<void>;
  go(): void;
  readonly result: Promise<R>;
}

const argsDir = mkdtempSync(join(tmpdir(), 'vigil-bench-args-'));
let argsFiles = 0;
process.once('exit', () => rmSync(argsDir, { recursive: true, force: true }));

export function startChild<R>(script: string, args: unknown): LoadChild<R> {
  // Arguments go through a file: thousands of tokens exceed the command line's limit.
  const argsFile = join(argsDir, `${argsFiles++}.json`);
  writeFileSync(argsFile, JSON.stringify(args));
  const child = spawn(process.execPath, ['--import', 'tsx', `bench/clients/${script}.ts`, argsFile], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  let onReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  const result = new Promise<R>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line === 'ready') onReady();
      else if (line.startsWith('{')) resolve(JSON.parse(line) as R);
    });
    child.once('exit', (code) => reject(new Error(`load process ${script} exited (${code}) without a result`)));
  });
  result.catch(() => {});
  return { ready, go: () => child.stdin!.end('go\n'), result };
}

/** Starts `count` children, releases them together and returns their results. */
export async function runChildren<R>(script: string, argsOf: (index: number) => unknown, count: number): Promise<R[]> {
  const children = Array.from({ length: count }, (_, i) => startChild<R>(script, argsOf(i)));
  await Promise.race([Promise.all(children.map((c) => c.ready)), Promise.all(children.map((c) => c.result))]);
  for (const c of children) c.go();
  return Promise.all(children.map((c) => c.result));
}
