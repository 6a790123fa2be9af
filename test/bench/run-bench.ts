// Runs `vigil bench` as a real child process, as a user does, and returns its
// exit status, output and (with --json) the parsed figures.
import { endOf, spawnChild } from '../support/children.ts';
import { repoRoot, vigilArgs } from '../support/server-process.ts';

export interface BenchRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The figures as printed (untyped JSON). */
  readonly figures?: any;
}

export function runBench(args: readonly string[], options: { onStderr?: (text: string, child: import('node:child_process').ChildProcess) => void } = {}): Promise<BenchRun> {
  return new Promise((done, fail) => {
    const child = spawnChild(process.execPath, vigilArgs(['bench', ...args]), { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      options.onStderr?.(stderr, child);
    });
    child.once('error', fail);
    void endOf(child).then(({ code, signal }) => {
      let figures: BenchRun['figures'];
      if (args.includes('--json')) {
        try {
          figures = JSON.parse(stdout);
        } catch {}
      }
      done({ code: code ?? (signal ? 128 : null), stdout, stderr, figures });
    });
  });
}

/** What a failed run said, for the assertion message. */
export const said = (run: BenchRun): string => `exit ${run.code}\n--- stdout\n${run.stdout.slice(-6000)}\n--- stderr\n${run.stderr.slice(-3000)}`;
