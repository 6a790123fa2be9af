// The flags each agent CLI takes, as its own `--help` lists them (claude
// 2.1.197, `codex exec` of codex-cli 0.171.0; test/fixtures/agent-help holds
// the recorded texts and a test keeps these tables equal to them). A step's
// args are read with its backend's table: a flag's value stays with it, and
// a flag the backend does not have is refused before anything runs.

export type Arity = 'value' | 'optional' | 'none';
export type FlagDialect = 'claude' | 'codex' | 'generic';

function table(value: string[], optional: string[], none: string[]): Map<string, Arity> {
  const m = new Map<string, Arity>();
  for (const f of value) m.set(f, 'value');
  for (const f of optional) m.set(f, 'optional');
  for (const f of none) m.set(f, 'none');
  return m;
}

export const CLAUDE_FLAGS = table(
  [
    '--add-dir', '--agent', '--agents', '--allowedTools', '--allowed-tools', '--append-system-prompt', '--betas', '--debug-file',
    '--disallowedTools', '--disallowed-tools', '--effort', '--fallback-model', '--file', '--input-format', '--json-schema',
    '--max-budget-usd', '--mcp-config', '--model', '-n', '--name', '--output-format', '--permission-mode', '--plugin-dir', '--plugin-url',
    '--remote-control-session-name-prefix', '--session-id', '--setting-sources', '--settings', '--system-prompt', '--tools',
  ],
  ['-d', '--debug', '--from-pr', '--prompt-suggestions', '--remote-control', '-r', '--resume', '-w', '--worktree'],
  [
    '--allow-dangerously-skip-permissions', '--ax-screen-reader', '--bg', '--background', '--bare', '--brief', '--chrome', '-c', '--continue',
    '--dangerously-skip-permissions', '--disable-slash-commands', '--exclude-dynamic-system-prompt-sections', '--fork-session', '-h', '--help',
    '--ide', '--include-hook-events', '--include-partial-messages', '--no-chrome', '--no-session-persistence', '-p', '--print',
    '--replay-user-messages', '--safe-mode', '--strict-mcp-config', '--tmux', '--verbose', '-v', '--version',
  ],
);

export const CODEX_EXEC_FLAGS = table(
  [
    '-c', '--config', '--enable', '--disable', '--remote', '--remote-auth-token-env', '-i', '--image', '-m', '--model', '--local-provider',
    '-p', '--profile', '-s', '--sandbox', '-C', '--cd', '--add-dir', '--thread-source', '--cyber-access-program', '--output-schema', '--color',
    '-o', '--output-last-message',
  ],
  [],
  [
    '--strict-config', '--oss', '--approve-for-me', '--dangerously-bypass-approvals-and-sandbox', '--dangerously-bypass-hook-trust',
    '--worktree', '--skip-git-repo-check', '--trust', '--ephemeral', '--ignore-user-config', '--ignore-rules', '--json', '-h', '--help',
    '-V', '--version',
  ],
);

/** `-p`/`--print` is read as claude's print flag for every backend (recipes are written for claude first): never a value-taking flag. */
export const PRINT_FLAGS = new Set(['-p', '--print']);

/** What a flag is in a dialect; `generic` (custom programs) knows both CLIs, a flag that takes a value in either taking one. */
export function arityOf(flag: string, dialect: FlagDialect): Arity | undefined {
  if (PRINT_FLAGS.has(flag)) return 'none';
  if (dialect === 'claude') return CLAUDE_FLAGS.get(flag);
  if (dialect === 'codex') return CODEX_EXEC_FLAGS.get(flag);
  const a = CLAUDE_FLAGS.get(flag);
  const b = CODEX_EXEC_FLAGS.get(flag);
  return a === 'value' || b === 'value' ? 'value' : (a ?? b);
}

/** Flags vigil sets itself to read the agent's output: a step cannot change them. */
const RESERVED: Record<'claude' | 'codex', Set<string>> = {
  claude: new Set(['--output-format', '--input-format', '--max-turns', '--help', '-h', '--version', '-v', '--bg', '--background']),
  codex: new Set(['--json', '--color', '--help', '-h', '--version', '-V']),
};

export interface FlagProblem {
  flag: string;
  why: string;
}

/**
 * The step's flags (with their values) on `backend`'s command line: claude's print flag is left out (both
 * run non-interactively already), `--permission-mode` and `--model` written for claude become codex's own,
 * and a flag the backend does not have or vigil sets itself is a problem.
 */
export function mapStepFlags(backend: 'claude' | 'codex', args: Array<{ value: string; kind: 'flag' | 'value' }>): { argv: string[]; problems: FlagProblem[] } {
  const argv: string[] = [];
  const problems: FlagProblem[] = [];
  const cli = backend === 'claude' ? 'claude' : 'codex exec';
  const own = backend === 'claude' ? CLAUDE_FLAGS : CODEX_EXEC_FLAGS;
  const other = backend === 'claude' ? CODEX_EXEC_FLAGS : CLAUDE_FLAGS;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.kind === 'value') {
      argv.push(arg.value);
      continue;
    }
    const eq = arg.value.indexOf('=');
    const name = arg.value.startsWith('--') && eq > 0 ? arg.value.slice(0, eq) : arg.value;
    const inline = eq > 0 && arg.value.startsWith('--') ? arg.value.slice(eq + 1) : undefined;
    const next = args[i + 1]?.kind === 'value' ? args[i + 1]!.value : undefined;
    const value = inline ?? next;
    const skipValue = (): void => {
      if (inline === undefined && next !== undefined) i++;
    };
    if (PRINT_FLAGS.has(name)) continue;
    if (RESERVED[backend].has(name)) {
      problems.push({ flag: name, why: `vigil sets ${cli}'s ${name === '--max-turns' ? 'turn limit from the step\'s "max_phases"' : 'output and mode itself'}: leave it out` });
      skipValue();
      continue;
    }
    if (backend === 'codex' && name === '--permission-mode') {
      const mapped = value === 'bypassPermissions' ? ['--dangerously-bypass-approvals-and-sandbox'] : value === 'acceptEdits' ? ['--sandbox', 'workspace-write'] : value === 'plan' ? ['--sandbox', 'read-only'] : null;
      if (mapped) argv.push(...mapped);
      else problems.push({ flag: name, why: `codex exec has no permission mode "${value ?? ''}" (acceptEdits, bypassPermissions and plan map to its --sandbox)` });
      skipValue();
      continue;
    }
    if (backend === 'claude' && (name === '-m') && value !== undefined) {
      argv.push('--model', value);
      skipValue();
      continue;
    }
    if (own.has(name)) {
      argv.push(arg.value);
      continue;
    }
    const whose = other.has(name) ? ` (it is ${backend === 'claude' ? 'codex' : 'claude'}'s flag)` : '';
    problems.push({ flag: name, why: `${cli} has no ${name}${whose}; see \`${cli} --help\` for the flags it takes` });
    skipValue();
  }
  return { argv, problems };
}
