// What each of a step's `args` is: a flag for the agent CLI, the value of
// the flag before it (`--allowedTools Bash`), or a word of the prompt (text,
// or a prompt file). Flags and their values go to the agent's command line;
// only words become the prompt. Which flags take a value is read from the
// backend's own flag table (backends/agent-flags.ts).
import { arityOf, type FlagDialect } from './backends/agent-flags.ts';

export type ArgKind = 'flag' | 'value' | 'word';

/** One token that reads as a file path: a slash (not a URL) or a .md/.txt name. */
export function looksLikePath(arg: string): boolean {
  return /^\S+$/.test(arg) && !arg.includes('://') && (arg.includes('/') || /\.(md|txt)$/i.test(arg));
}

export function classifyArgs(args: readonly string[], dialect: FlagDialect = 'generic'): ArgKind[] {
  const kinds: ArgKind[] = [];
  /** Index of a value taken only because the flag is unknown or its value optional. */
  let guessed = -1;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!(arg.startsWith('-') && arg.length > 1)) {
      kinds.push('word');
      continue;
    }
    kinds.push('flag');
    const next = args[i + 1];
    if (arg.includes('=') || next === undefined) continue;
    const arity = arityOf(arg, dialect);
    if (arity === 'none') continue;
    if (arity === 'value') {
      kinds.push('value');
      i++;
      continue;
    }
    if (next.startsWith('-')) continue;
    // An unknown flag (or one whose value is optional) takes the next argument when that is one plain token.
    if (/^\S+$/.test(next) && !looksLikePath(next)) {
      kinds.push('value');
      guessed = i + 1;
      i++;
    }
  }
  // A step always has a prompt: when a guessed value was the only candidate, it is the prompt (`-x date`).
  if (guessed >= 0 && !kinds.includes('word')) kinds[guessed] = 'word';
  return kinds;
}
