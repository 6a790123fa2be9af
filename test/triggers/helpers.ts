// Scratch projects for the trigger tests: a temporary folder with
// .vigil/recipes, a private HOME (so no user recipes leak in), and helpers
// to run the real `vigil` command.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnChild } from '../support/children.ts';
import { type CliResult, runCli } from '../support/cli.ts';
import { scaled } from '../support/time-scale.ts';
import { cliEntry as vigilBin } from '../support/cli-entry.ts';

export { vigilBin };

export interface Scratch {
  root: string;
  home: string;
  env: NodeJS.ProcessEnv;
  recipe(doc: Record<string, unknown>, file?: string): string;
  read(file: string): string;
  cleanup(): void;
}

export function scratchProject(): Scratch {
  const base = mkdtempSync(join(tmpdir(), 'vigil-triggers-'));
  const root = join(base, 'project');
  const home = join(base, 'home');
  mkdirSync(join(root, '.vigil', 'recipes'), { recursive: true });
  mkdirSync(home, { recursive: true });
  const env = { ...process.env, HOME: home };
  return {
    root,
    home,
    env,
    recipe(doc, file) {
      const path = join(root, '.vigil', 'recipes', file ?? `${String(doc.name)}.json`);
      writeFileSync(path, JSON.stringify(doc));
      return path;
    },
    read(file) {
      try {
        return readFileSync(join(root, file), 'utf8');
      } catch {
        return '';
      }
    },
    cleanup() {
      rmSync(base, { recursive: true, force: true });
    },
  };
}

export function vigil(s: Scratch, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [vigilBin, ...args], { cwd: s.root, env: s.env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** As vigil(), without blocking the event loop meanwhile (for tests that run at once in one file). */
export function vigilAsync(s: Scratch, args: string[]): Promise<CliResult> {
  return runCli(args, { cwd: s.root, env: s.env, timeoutMs: 60_000 });
}

export interface Running {
  child: ChildProcess;
  log(): string;
  exited: Promise<number | null>;
}

export function startDaemon(s: Scratch, extraEnv: NodeJS.ProcessEnv = {}, flags: readonly string[] = []): Running {
  const child = spawnChild(process.execPath, [vigilBin, 'daemon', ...flags], { cwd: s.root, env: { ...s.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (b: Buffer) => (log += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, log: () => log, exited };
}

/** Ends a daemon a test started, if it still runs, and waits for its exit (SIGKILL unless told). */
export async function stopDaemon(d: Running | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!d || d.child.exitCode !== null || d.child.signalCode !== null) return;
  d.child.kill(signal);
  await d.exited;
}

export async function waitFor<T>(what: string, check: () => T | undefined | null | false, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + scaled(timeoutMs);
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function lines(text: string): string[] {
  return text.split('\n').filter((l) => l.length > 0);
}
