// Runs `vigil conform` as a real child process and returns its exit status,
// output and (with --json) the parsed report.
import { repoRoot, vigilArgs } from '../support/server-process.ts';
import { endOf, spawnChild } from '../support/children.ts';

export interface ConformRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly report?: { passed: number; failed: number; skipped: number; checks: { id: string; name: string; section: string; ok: boolean; reason: string; skipped?: boolean }[] };
}

export function runConform(args: readonly string[]): Promise<ConformRun> {
  return new Promise((done, fail) => {
    const child = spawnChild(process.execPath, vigilArgs(['conform', ...args]), { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', fail);
    void endOf(child).then(({ code }) => {
      let report: ConformRun['report'];
      if (args.includes('--json')) {
        try {
          report = JSON.parse(stdout);
        } catch {}
      }
      done({ code, stdout, stderr, report });
    });
  });
}

export const failedIds = (run: ConformRun) => (run.report?.checks ?? []).filter((c) => !c.ok).map((c) => c.id);
