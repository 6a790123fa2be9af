// Test helpers for the SDK: a throwaway project with its own VIGIL_HOME and
// HOME, and a way to run the real `vigil` CLI there (optionally with stdin).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CliResult, runCli } from '../support/cli.ts';
import { tempDir } from '../support/server-process.ts';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');
export { cliEntry } from '../support/cli-entry.ts';

export interface SdkProject {
  /** The children's TMPDIR. */
  tmp: string;
  root: string;
  home: string;
  file(rel: string, text: string): string;
  script(name: string, body: string): string;
  cleanup(): void;
}

export function makeSdkProject(): SdkProject {
  const root = mkdtempSync(join(tmpdir(), 'vigil-sdk-'));
  // Beside the project, not in it: mirror isolation copies the project into the temporary folder.
  const tmp = tempDir('vigil-sdk-tmp-');
  const home = join(root, '.home');
  mkdirSync(join(root, '.vigil', 'scripts'), { recursive: true });
  mkdirSync(home, { recursive: true });
  const file = (rel: string, text: string): string => {
    const path = join(root, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  };
  return {
    root,
    home,
    tmp,
    file,
    script: (name, body) => file(join('.vigil', 'scripts', name), body),
    // Retried: a CLI child that is still exiting may write a last file while the folder goes.
    cleanup: () => rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }),
  };
}

export type { CliResult } from '../support/cli.ts';

export function projectEnv(project: SdkProject, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VIGIL_') && !k.startsWith('VITEST')) base[k] = v;
  // TMPDIR: what a run leaves in the temporary folder by design (a conflicted mirror copy) goes with the test's files.
  const env: NodeJS.ProcessEnv = { ...base, HOME: project.home, VIGIL_HOME: join(project.home, '.vigil'), TMPDIR: project.tmp, ...extra };
  // VIGIL_HOME: '' runs as a user without it: the vault chooses its backend as on a real machine (under HOME).
  if (env.VIGIL_HOME === '') delete env.VIGIL_HOME;
  return env;
}

export function vigil(project: SdkProject, args: string[], options: { stdin?: string; env?: Record<string, string>; cwd?: string } = {}): Promise<CliResult> {
  return runCli(args, { cwd: options.cwd ?? project.root, env: projectEnv(project, options.env), stdin: options.stdin });
}

/** The last line of stdout parsed as JSON (what `vigil script run` prints). */
export function lastJson(r: CliResult): unknown {
  const lines = r.stdout.trimEnd().split('\n');
  return JSON.parse(lines.at(-1) ?? 'null');
}
