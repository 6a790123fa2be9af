// What each of a step's `args` is: a flag for the agent CLI, the value of
// the flag before it (`--allowedTools Bash`), or a word of the prompt (text,
// or a prompt file). Flags and their values go to the agent's command line;
// only words become the prompt.

export type ArgKind = 'flag' | 'value' | 'word';

/** Flags of claude and codex that take a value. */
const valueFlags = new Set([
  '--allowedTools', '--allowed-tools', '--disallowedTools', '--disallowed-tools', '--tools', '--add-dir', '--model', '--fallback-model',
  '--append-system-prompt', '--system-prompt', '--mcp-config', '--permission-mode', '--settings', '--setting-sources', '--session-id',
  '--resume', '-r', '--max-turns', '--output-format', '--input-format', '--agents', '--agent', '--effort', '--betas', '--plugin-dir',
  '-m', '-c', '--config', '-s', '--sandbox', '-a', '--ask-for-approval', '--profile', '-C', '--cd', '-i', '--image',
  '--output-schema', '--color', '-o', '--output-last-message', '--enable', '--disable',
]);

/** Flags that take no value, so the argument after them is never theirs. */
const booleanFlags = new Set([
  '--print', '--verbose', '--debug', '--continue', '--dangerously-skip-permissions', '--dangerously-bypass-approvals-and-sandbox',
  '--full-auto', '--json', '--skip-git-repo-check', '--include-partial-messages', '--strict-mcp-config', '--oss', '--search',
]);

/** One token that reads as a file path: a slash (not a URL) or a .md/.txt name. */
export function looksLikePath(arg: string): boolean {
  return /^\S+$/.test(arg) && !arg.includes('://') && (arg.includes('/') || /\.(md|txt)$/i.test(arg));
}

export function classifyArgs(args: readonly string[]): ArgKind[] {
  const kinds: ArgKind[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!(arg.startsWith('-') && arg.length > 1)) {
      kinds.push('word');
      continue;
    }
    kinds.push('flag');
    const next = args[i + 1];
    if (arg.includes('=') || next === undefined || next.startsWith('-') || booleanFlags.has(arg)) continue;
    // A flag this list does not know takes the next argument when that is one plain token.
    if (valueFlags.has(arg) || (/^\S+$/.test(next) && !looksLikePath(next))) {
      kinds.push('value');
      i++;
    }
  }
  return kinds;
}
