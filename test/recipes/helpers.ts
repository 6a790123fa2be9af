// Test helpers: a throwaway project (own .vigil/recipes, HOME and PATH with
// the fake agents) and a way to run the real `vigil` CLI in it.
import type { ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunJson } from '../../src/recipes/records/run-record.ts';
import { spawnChild } from '../support/children.ts';
import { scaled } from '../support/time-scale.ts';
import { tempDir } from '../support/server-process.ts';
import { cliEntry } from '../support/cli-entry.ts';

/** The CLI entry the tests run (test/support/cli-entry.ts). */
export { cliEntry };

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');
export const fakesDir = join(repoRoot, 'test', 'fakes');

export interface Project {
  root: string;
  /** The children's TMPDIR. */
  tmp: string;
  home: string;
  bin: string;
  agent: string;
  log: string;
  file(rel: string, text: string): string;
  recipe(doc: Record<string, unknown>, scope?: 'project' | 'user'): string;
  yml(text: string): void;
  logEntries(): Array<Record<string, unknown>>;
  cleanup(): void;
}

export function makeProject(options: { claude?: boolean; codex?: boolean } = {}): Project {
  const root = mkdtempSync(join(tmpdir(), 'vigil-recipes-'));
  const home = join(root, '.home');
  const bin = join(root, '.bin');
  for (const d of [home, bin, join(root, '.vigil', 'recipes')]) mkdirSync(d, { recursive: true });
  // The fakes are copied into the project so that they stay visible inside a
  // VM sandbox, whose private /tmp would hide a checkout that lives under /tmp.
  const fakes = join(root, '.fakes');
  mkdirSync(fakes);
  for (const name of ['fake-claude.mjs', 'fake-codex.mjs', 'fake-agent.mjs', 'directives.mjs']) {
    copyFileSync(join(fakesDir, name), join(fakes, name));
    chmodSync(join(fakes, name), 0o755);
  }
  if (options.claude !== false) symlinkSync(join(fakes, 'fake-claude.mjs'), join(bin, 'claude'));
  if (options.codex) symlinkSync(join(fakes, 'fake-codex.mjs'), join(bin, 'codex'));
  const agent = join(fakes, 'fake-agent.mjs');
  // Outside the project: mirror and rsync modes copy the project back and forth.
  const log = `${root}.fake-log.jsonl`;
  // Beside the project, not in it: mirror isolation copies the project into the temporary folder.
  const tmp = tempDir('vigil-recipes-tmp-');
  const project: Project = {
    root,
    home,
    tmp,
    bin,
    agent,
    log,
    file(rel, text) {
      const path = join(root, rel);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      return path;
    },
    recipe(doc, scope = 'project') {
      const dir = scope === 'project' ? join(root, '.vigil', 'recipes') : join(home, '.vigil', 'recipes');
      mkdirSync(dir, { recursive: true });
      const path = join(dir, `${String(doc.name)}.json`);
      writeFileSync(path, JSON.stringify(doc, null, 2));
      return path;
    },
    yml(text) {
      writeFileSync(join(root, 'vigil.yml'), text);
    },
    logEntries() {
      try {
        return readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      } catch {
        return [];
      }
    },
    cleanup() {
      killFakesOf(log);
      rmSync(root, { recursive: true, force: true });
      rmSync(log, { force: true });
    },
  };
  return project;
}

/** Safety net for failing tests: stops every fake agent (and its children) still running for this project. */
function killFakesOf(log: string): void {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`FAKE_LOG=${log}`)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone, or not ours
    }
  }
}

export interface VigilResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface VigilProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout has matched `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  done: Promise<VigilResult>;
}

function childEnv(project: Project, env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VIGIL_') && !k.startsWith('VITEST')) base[k] = v;
  // TMPDIR: what a run leaves in the temporary folder by design (a conflicted mirror copy) goes with the test's files.
  return { ...base, HOME: project.home, PATH: `${project.bin}:${process.env.PATH}`, FAKE_LOG: project.log, TMPDIR: project.tmp, ...env };
}

/** `group`: the runner leads a process group of its own, which a test signals as a terminal's Ctrl-C does (`process.kill(-pid)`). */
export function startVigil(project: Project, args: string[], env: Record<string, string> = {}, cwd = project.root, group = false): VigilProcess {
  const child = spawnChild(process.execPath, [cliEntry, ...args], { cwd, env: childEnv(project, env), stdio: ['pipe', 'pipe', 'pipe'], detached: group });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    for (const w of waiters) w();
  });
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const done = new Promise<VigilResult>((res) => child.on('close', (code) => res({ code, stdout: out, stderr: err })));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    done,
    waitFor(pattern, timeoutMs = 15_000) {
      return new Promise((res, rej) => {
        const check = (): boolean => {
          const m = out.match(pattern);
          if (m) {
            res(m);
            return true;
          }
          return false;
        };
        if (check()) return;
        const timer = setTimeout(() => rej(new Error(`timed out waiting for ${pattern}; stdout:\n${out}\nstderr:\n${err}`)), scaled(timeoutMs));
        waiters.push(() => {
          if (check()) clearTimeout(timer);
        });
        void done.then(() => {
          if (!check()) {
            clearTimeout(timer);
            rej(new Error(`vigil exited before ${pattern}; stdout:\n${out}\nstderr:\n${err}`));
          }
        });
      });
    },
  };
}

export function runVigil(project: Project, args: string[], env: Record<string, string> = {}, cwd = project.root): Promise<VigilResult> {
  const p = startVigil(project, args, env, cwd);
  p.child.stdin!.end();
  return p.done;
}

/** Every run recorded in the project, oldest first. As `vigil runs` does, a hidden entry is skipped: it is a record still being made (or left by a runner killed while making it). */
export function runsOf(project: Project): RunJson[] {
  const dir = join(project.root, '.vigil', 'runs');
  let ids: string[];
  try {
    ids = readdirSync(dir).filter((id) => !id.startsWith('.'));
  } catch {
    return [];
  }
  return ids
    .map((id) => JSON.parse(readFileSync(join(dir, id, 'run.json'), 'utf8')) as RunJson)
    .sort((a, b) => a.started.localeCompare(b.started));
}

export function lastRun(project: Project): RunJson {
  const runs = runsOf(project);
  const run = runs[runs.length - 1];
  if (!run) throw new Error('no run recorded');
  return run;
}

export function stepOf(run: RunJson, label: string) {
  const s = run.steps.find((x) => x.label === label);
  if (!s) throw new Error(`no step ${label}`);
  return s;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A custom provider named "fake" running the fake agent. */
export function customProvider(project: Project, extra = ''): void {
  project.yml(`providers:\n  fake:\n    type: custom\n    command: ${project.agent}\n${extra}`);
}
