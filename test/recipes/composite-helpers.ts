// A throwaway git project whose custom backend "sh" runs each step's first
// argument as a shell script, so composite-recipe tests can describe what
// every agent does (edit files, print verdicts, scores and usage) inline.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakesDir, makeProject, type Project, runsOf, startVigil, type VigilResult } from './helpers.ts';
import type { RunJson } from '../../src/recipes/records/run-record.ts';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function makeShProject(options: { git?: boolean; codex?: boolean } = {}): Project {
  const project = makeProject({ codex: options.codex === true });
  const agent = join(project.root, '.fakes', 'sh-agent.sh');
  copyFileSync(join(fakesDir, 'sh-agent.sh'), agent);
  chmodSync(agent, 0o755);
  project.yml(`providers:\n  sh:\n    type: custom\n    command: ${agent}\ndefault_backend: sh\n`);
  if (options.git !== false) {
    project.file('.gitignore', '.home/\n.bin/\n.fakes/\n.vigil/\nvigil.yml\n');
    project.file('README.md', 'base\n');
    git(project.root, 'init', '-q', '-b', 'main');
    git(project.root, 'config', 'user.email', 'test@localhost');
    git(project.root, 'config', 'user.name', 'test');
    git(project.root, 'add', '-A');
    git(project.root, 'commit', '-q', '-m', 'init');
  }
  return project;
}

/** A one-step sequence recipe whose agent runs `script`. */
export function shRecipe(project: Project, name: string, script: string, extra: Record<string, unknown> = {}, stepExtra: Record<string, unknown> = {}): void {
  project.recipe({ name, canary: false, steps: [{ label: 'work', args: [script], ...stepExtra }], ...extra });
}

export function runById(project: Project, id: string): RunJson {
  return JSON.parse(readFileSync(join(project.root, '.vigil', 'runs', id, 'run.json'), 'utf8')) as RunJson;
}

/** The root run (no parent) started last. */
export function rootRun(project: Project): RunJson {
  return runsOf(project)
    .filter((r) => !r.parent)
    .at(-1)!;
}

export function childRuns(project: Project, run: RunJson): RunJson[] {
  return (run.children ?? []).filter((c) => c.run_id).map((c) => runById(project, c.run_id!));
}

export function outputOf(project: Project, run: RunJson): string {
  return readFileSync(join(project.root, '.vigil', 'runs', run.id, 'output.txt'), 'utf8');
}

/** `vigil sequence <name>`, stopped with Ctrl-C once it prints `ready`: what it printed, and its exit code. */
export async function interruptedRun(project: Project, name: string, ready: RegExp): Promise<VigilResult> {
  const run = startVigil(project, ['sequence', name]);
  await run.waitFor(ready);
  run.child.kill('SIGINT');
  return run.done;
}
