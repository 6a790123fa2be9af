// `pre` of a pipeline entry: shell commands run in order (`sh -c`, in the
// entry's workspace, with its variables) before the recipe; the first
// non-zero exit fails the entry. The destructive-intent guard applies as to
// prompts and build commands.
import { createWatchdog, runSupervised } from '../process/process-group.ts';
import { describeFinding, scanShell } from '../preflight/destructive.ts';
import { substitute } from '../variables.ts';

/** Runs the commands; returns why the entry fails, or null when all exited 0. */
export async function runPre(
  commands: string[],
  cwd: string,
  vars: Record<string, string>,
  baseEnv: NodeJS.ProcessEnv,
  allowDestructive: boolean,
  signal: AbortSignal,
  note: (line: string) => void,
): Promise<string | null> {
  for (const [i, raw] of commands.entries()) {
    const findings = scanShell(raw, `pre[${i}]`, vars);
    if (findings.length > 0 && !allowDestructive)
      return `pre[${i}] refused: destructive intent (${findings.map(describeFinding).join('; ')}); set "allow_destructive_intents": true to run it`;
    const command = substitute(raw, vars).text;
    note(`$ ${command}`);
    let output = '';
    const r = await runSupervised(
      {
        command: '/bin/sh',
        args: ['-c', command],
        cwd,
        env: { ...baseEnv, ...vars },
        onOutput: (chunk) => {
          output = (output + chunk.toString()).slice(-2000);
        },
      },
      createWatchdog(3_600_000, 3_600_000, signal),
    );
    if (r.killedBy) return `pre[${i}] "${command}" was stopped (${r.killedBy})`;
    if (r.spawnError || r.exitCode !== 0)
      return `pre[${i}] "${command}" exited with ${r.exitCode === null ? `signal ${r.signal}` : `code ${r.exitCode}`}${output.trim() ? `: ${output.trim().split('\n').slice(-3).join(' / ')}` : ''}`;
  }
  return null;
}
