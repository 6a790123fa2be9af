// `shell` (opt-in: --allow-shell-sources and the admin token): runs a
// command with `sh -c` under the source root every interval and writes each
// output line, or when the output changed, or when the exit code changed.
// A command over its timeout is killed with its whole process group.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { SourceRun } from '../run.ts';

interface ShellCursor {
  hash: string | null;
  exit: number | null;
}

const maxOutputBytes = 1 << 20;
const maxLinesPerRun = 1000;

interface Result {
  exit: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

function runCommand(command: string, cwd: string, timeoutMs: number, signal: AbortSignal): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let timedOut = false;
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    signal.addEventListener('abort', kill, { once: true });
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxOutputBytes) into.push(chunk);
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (exit, sig) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', kill);
      resolve({ exit, signal: sig, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut });
    });
  });
}

export function runShell(run: SourceRun): void {
  const { command, interval_s: interval, timeout_s: timeout, emit } = run.settings<{
    command: string;
    interval_s: number;
    timeout_s: number;
    emit: 'lines' | 'change' | 'exit';
  }>();
  run.every(interval * 1000, async () => {
    const result = await runCommand(command, run.root, timeout * 1000, run.signal);
    if (run.signal.aborted) return;
    const previous = run.cursor<ShellCursor>() ?? { hash: null, exit: null };
    const next: ShellCursor = { hash: createHash('sha256').update(result.stdout).digest('hex'), exit: result.exit };
    const base = { command, exit: result.exit, ...(result.timedOut ? { timed_out: true } : {}), ...(result.signal ? { signal: result.signal } : {}) };
    if (emit === 'lines') {
      const lines = result.stdout.split('\n').filter((line) => line.length > 0).slice(0, maxLinesPerRun);
      for (const [i, line] of lines.entries()) {
        run.emit({ subject: command, data: { ...base, line }, cursor: i === lines.length - 1 ? next : undefined });
      }
      if (lines.length === 0) run.setCursor(next);
    } else if (emit === 'change' && next.hash !== previous.hash) {
      run.emit({ subject: command, data: { ...base, stdout: result.stdout, stderr: result.stderr.slice(0, 4096) }, cursor: next });
    } else if (emit === 'exit' && next.exit !== previous.exit) {
      run.emit({ subject: command, data: { ...base, previous_exit: previous.exit, stderr: result.stderr.slice(0, 4096) }, cursor: next });
    } else {
      run.setCursor(next);
    }
    if (result.timedOut) throw new Error(`"${command}" ran longer than ${timeout} s and was killed`);
    run.contact();
  });
}
