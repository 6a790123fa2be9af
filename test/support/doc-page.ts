// Runs a documentation page the way a reader does: every ```sh block of the
// page, in order, in one bash with `set -euo pipefail`, in a fresh folder,
// with `vigil` on PATH as this checkout's bin/vigil.js and a HOME of its own.
// Blocks fenced as ```console (or any other language) are illustrations and
// are not run. The pages check themselves: a command whose result the page
// promises is followed by a check (grep, test) that fails the script.
//
// The one liberty taken: the ports a page uses (8130 and the ones after it,
// 8787 for the edge) are moved to free ones, so that pages run beside other
// tests; the page's text is otherwise run as written.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { spawnChild } from './children.ts';
import { repoRoot, tempDir } from './server-process.ts';
import { expect } from 'vitest';
import { scaled } from './time-scale.ts';

export interface PageRun {
  readonly code: number | null;
  readonly output: string;
  readonly script: string;
  /** The page's folder (its home/ and project/), left until the test file ends for checks of what the page left. */
  readonly folder: string;
}

/** The ```sh blocks of a markdown page, in order. */
export function shellBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const fence = /^```sh\n([\s\S]*?)^```$/gm;
  for (let match = fence.exec(markdown); match; match = fence.exec(markdown)) blocks.push(match[1]!);
  return blocks;
}

async function freePort(): Promise<number> {
  return await new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

const pagePorts = [8130, 8131, 8132, 8133, 8787];

/**
 * The page's script with each of its ports moved to a free one, in one pass: replaced one port after
 * another, a free port that holds another's digits (8130 moved to 38787, then 8787 to 46407) became
 * 346407, and the page waited for a server that could never listen.
 */
async function withFreePorts(script: string): Promise<string> {
  const moved = new Map<string, string>();
  for (const port of pagePorts) {
    let free = String(await freePort());
    while ([...moved.values()].includes(free)) free = String(await freePort());
    moved.set(String(port), free);
  }
  return script.replace(new RegExp(`(?<!\\d)(${pagePorts.join('|')})(?!\\d)`, 'g'), (port) => moved.get(port)!);
}

/**
 * Runs the page at `docs/<page>`; resolves when its script exits or `limitMs`
 * passes (then the script and everything it started are killed).
 */
export async function runDocPage(page: string, options: { limitMs?: number; env?: Record<string, string> } = {}): Promise<PageRun> {
  const script = await withFreePorts(shellBlocks(readFileSync(join(repoRoot, 'docs', page), 'utf8')).join('\n'));
  const work = tempDir('vigil-doc-');
  const { home, project } = pageFolders(work);
  const bin = join(work, 'bin');
  // The page's temporary files too (a cluster node killed with -9 leaves its replica folder there).
  const tmp = join(work, 'tmp');
  const prelude = [
    'set -euo pipefail',
    `mkdir -p ${home} ${project} ${bin} ${tmp}`,
    `printf '#!/bin/sh\\nexec "%s" "%s" "$@"\\n' '${process.execPath}' '${join(repoRoot, 'bin/vigil.js')}' > ${bin}/vigil`,
    `chmod +x ${bin}/vigil`,
    `cd ${project}`,
  ].join('\n');
  const full = `${prelude}\n${script}`;
  const child = spawnChild('bash', ['-c', full], {
    cwd: work,
    detached: true,
    env: {
      ...process.env,
      HOME: home,
      VIGIL_HOME: join(home, '.vigil'),
      TMPDIR: tmp,
      PATH: `${bin}:${process.env.PATH}`,
      GIT_AUTHOR_NAME: 'Doc Reader',
      GIT_AUTHOR_EMAIL: 'reader@example.com',
      GIT_COMMITTER_NAME: 'Doc Reader',
      GIT_COMMITTER_EMAIL: 'reader@example.com',
      VIGIL_BASE: '',
      CI: '',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const limit = options.limitMs ?? scaled(120_000);
  const code = await new Promise<number | null>((done) => {
    const timer = setTimeout(() => {
      output += `\n[doc-page] ${page} still running after ${limit / 1000} s: killed\n`;
      killGroup(child.pid);
    }, limit);
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      done(exitCode);
    });
  });
  // What the page left in the background (a server, a daemon) goes with it.
  killGroup(child.pid);
  return { code, output, script: full, folder: work };
}

function pageFolders(work: string): { home: string; project: string } {
  return { home: join(work, 'home'), project: join(work, 'project') };
}

/** Runs `vigil <args>` in a page's project after the page ran, as the page's reader would next. */
export function vigilAfterPage(run: PageRun, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const { home, project } = pageFolders(run.folder);
  const result = spawnSync(process.execPath, [join(repoRoot, 'bin/vigil.js'), ...args], {
    cwd: project,
    encoding: 'utf8',
    timeout: scaled(60_000),
    env: { ...process.env, HOME: home, VIGIL_HOME: join(home, '.vigil'), VIGIL_BASE: '', CI: '' },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is gone.
  }
}

/** Runs the page and fails the test with everything it printed unless it exits 0; returns the run. */
export async function expectPageRuns(page: string, limitMs: number): Promise<PageRun> {
  const run = await runDocPage(page, { limitMs });
  expect(run.code, `${page} failed (exit ${run.code}):\n${run.output}`).toBe(0);
  return run;
}
