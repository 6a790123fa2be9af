// `pre` of a pipeline entry: shell commands run in order (`sh -c`, in the
// entry's workspace, with its variables) before the recipe; the first
// non-zero exit fails the entry. The destructive-intent guard applies as to
// prompts and build commands. A variable from outside is placed in the
// command as data, and reaches its environment only where the recipe
// declares it (outside-vars.ts).
import { environmentOf, isOutside, type VariableOrigin } from '../outside-vars.ts';
import { describeFinding, scanShell } from '../preflight/destructive.ts';
import { createWatchdog, runSupervised } from '../process/process-group.ts';
import { substituteShell } from '../variables.ts';

/** Runs the commands; returns why the entry fails, or null when all exited 0. */
export async function runPre(
  commands: string[],
  cwd: string,
  vars: Record<string, string>,
  baseEnv: NodeJS.ProcessEnv,
  allowDestructive: boolean,
  signal: AbortSignal,
  note: (line: string) => void,
  origin: VariableOrigin,
): Promise<string | null> {
  const { env } = environmentOf(vars, origin);
  for (const [i, raw] of commands.entries()) {
    const placed = substituteShell(raw, vars, (name) => isOutside(origin, name, vars[name]));
    if (placed.error) return `pre[${i}] not run: ${placed.error}`;
    const command = placed.text;
    // The guard reads the command as the shell will: substituted, with the environment it gets.
    const findings = scanShell(command, `pre[${i}]`, { ...definedOf(baseEnv), ...env });
    if (findings.length > 0 && !allowDestructive)
      return `pre[${i}] refused: destructive intent (${findings.map(describeFinding).join('; ')}); set "allow_destructive_intents": true to run it`;
    note(`$ ${command}`);
    let output = '';
    const r = await runSupervised(
      {
        command: '/bin/sh',
        args: ['-c', command],
        cwd,
        env: { ...baseEnv, ...env },
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

function definedOf(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('VIGIL_')));
}
