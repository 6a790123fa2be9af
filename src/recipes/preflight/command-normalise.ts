// One command's argument list as the guard judges it: wrappers and their
// options taken off (`sudo -u root`, `nice -n 5`, `env X=1`, `timeout 5`,
// `xargs -n1`, `command`, `exec` …), the program's path dropped (`/bin/rm`),
// tools' global options before the subcommand dropped (`git -C dir`,
// `kubectl --context x`, `terraform -chdir=x`), and the text it hands to a
// shell or an interpreter (`sh -c`, `eval`, `trap`, `su -c`, `ssh host …`,
// `python -c`, `node -e`, a script read from standard input) returned as
// scripts to read in turn.
import type { EmbeddedScript, Lang, NormalCommand, Stdin } from './command-types.ts';
import { awkScripts, sedScripts } from './tool-programs.ts';
import { unwrap } from './wrappers.ts';

export type { EmbeddedScript, Lang, NormalCommand, Stdin } from './command-types.ts';

const base = (cmd: string) => cmd.replace(/^.*\//, '');
/** How a script file is handed over, for a finding: `bash <(…)`, or `bash x.sh` for a file the line wrote. */
const viaFile = (cmd: string, file: string) => (file.startsWith('/dev/fd/\u0000') ? `${cmd} <(…)` : `${cmd} ${file}, written by this command`);

const shells = /^(?:ba|da|z|k|mk|a|fi|y|c|tc)?sh$/;
const interpreters: Array<[RegExp, Lang, string[]]> = [
  [/^python(?:[23](?:\.\d+)?)?$|^pypy3?$/, 'python', ['-c']],
  [/^(?:node|nodejs|bun)$/, 'node', ['-e', '--eval', '-p', '--print']],
  [/^perl$/, 'perl', ['-e', '-E']],
  [/^ruby$/, 'ruby', ['-e']],
  [/^php$/, 'php', ['-r']],
];

/** Options before a tool's subcommand that take a separate value. */
const globalValueOptions: Record<string, string[]> = {
  git: ['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--config-env', '--exec-path', '--list-cmds', '--attr-source'],
  kubectl: ['-n', '--namespace', '--context', '--cluster', '--kubeconfig', '-s', '--server', '--user', '--token', '--as', '--as-group', '--as-uid', '--request-timeout', '--cache-dir', '--certificate-authority', '--client-certificate', '--client-key', '--tls-server-name', '-v', '--v', '--profile', '--profile-output', '--log-file', '--password', '--username', '--vmodule', '-l'],
  helm: ['-n', '--namespace', '--kube-context', '--kubeconfig', '--registry-config', '--repository-cache', '--repository-config', '--kube-token', '--kube-apiserver', '--kube-as-user', '--kube-as-group', '--kube-ca-file', '--burst-limit', '--qps'],
  terraform: ['-chdir'],
  pulumi: ['-C', '--cwd', '--color', '-v', '--verbose', '--profiling', '--tracing', '--memprofilerate'],
  docker: ['-H', '--host', '-c', '--context', '--config', '-l', '--log-level', '--tlscacert', '--tlscert', '--tlskey'],
};
globalValueOptions.oc = globalValueOptions.kubectl!;
globalValueOptions.tofu = globalValueOptions.terraform!;
globalValueOptions.podman = globalValueOptions.docker!;

function skipOptions(args: string[], valueOptions: readonly string[], stopAtFirstOperand = true): number {
  let i = 0;
  while (i < args.length) {
    const a = args[i]!;
    if (a === '--') return i + 1;
    if (!a.startsWith('-') || a === '-') {
      if (stopAtFirstOperand) return i;
      i += 1;
      continue;
    }
    const name = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    if (valueOptions.includes(name) && !a.includes('=')) i += 2;
    // A short option with its value attached (`-n5`, `-uroot`).
    else i += 1;
  }
  return i;
}

/** The command without wrappers, tool global options and program path; what it hands to shells and interpreters. */
export function normalise(argvIn: readonly string[], stdin: Stdin, contentOf: (arg: string) => string | null | undefined): NormalCommand {
  const processOutput = contentOf;
  const unwrapped = unwrap(argvIn, stdin);
  const out: NormalCommand = { argv: [], scripts: [...unwrapped.scripts, ...scriptsInVariables(unwrapped.assignments)], nested: [] };
  if (unwrapped.cwd !== undefined) out.cwd = unwrapped.cwd;
  const argv = unwrapped.argv;
  if (argv.length === 0) return out;
  const cmd = base(argv[0]!);
  const args = argv.slice(1);
  out.argv = [cmd, ...args];
  // A script written earlier in the same command, run by its path (`./x.sh`).
  if (argv[0]!.includes('/')) {
    const content = contentOf(argv[0]!);
    if (content !== undefined) out.scripts.push({ lang: content === null ? 'shell' : langOfScript(content), text: content ?? undefined, via: argv[0]! });
  }

  if (cmd === 'eval') out.scripts.push({ lang: 'shell', text: args.join(' '), via: 'eval' });
  else if (cmd === 'trap' && args.length > 1 && !args[0]!.startsWith('-')) out.scripts.push({ lang: 'shell', text: args[0], via: 'trap' });
  else if (cmd === 'source' || cmd === '.') {
    const content = args[0] === undefined ? undefined : processOutput(args[0]);
    if (content !== undefined) out.scripts.push({ lang: 'shell', text: content ?? undefined, via: viaFile(cmd, args[0]!) });
    else if (args[0] === '/dev/stdin') out.stdinScript = 'shell';
  } else if (cmd === 'su' || cmd === 'runuser') {
    const c = args.findIndex((a) => a === '-c' || a === '--command' || a.startsWith('--command='));
    if (c >= 0) out.scripts.push({ lang: 'shell', text: args[c]!.startsWith('--command=') ? args[c]!.slice(10) : args[c + 1], via: `${cmd} -c` });
  } else if (cmd === 'ssh') {
    const i = skipOptions(args, ['-p', '-i', '-o', '-l', '-F', '-J', '-L', '-R', '-D', '-b', '-c', '-e', '-m', '-S', '-W', '-w', '-E', '-B', '-I', '-O', '-Q']);
    if (args.length > i + 1) out.scripts.push({ lang: 'shell', text: args.slice(i + 1).join(' '), via: 'ssh' });
  } else if (shells.test(cmd)) readShellArgs(cmd, args, out, processOutput);
  else if (cmd === 'git') out.argv = withoutGlobalOptions(cmd, args, out);
  else if (globalValueOptions[cmd]) out.argv = withoutGlobalOptions(cmd, args, out);
  else if (cmd === 'find') out.nested = findExecs(args);
  else if (/^(?:g|m|n)?awk$/.test(cmd)) out.scripts.push(...awkScripts(args, processOutput));
  else if (/^g?sed$/.test(cmd)) out.scripts.push(...sedScripts(args, processOutput));
  else if (cmd === 'deno' && args[0] === 'eval') out.scripts.push({ lang: 'node', text: args.slice(skipOptions(args.slice(1), []) + 1).join(' '), via: 'deno eval' });
  else
    for (const [name, lang, codeFlags] of interpreters)
      if (name.test(cmd)) {
        readInterpreterArgs(cmd, lang, codeFlags, args, out, processOutput);
        break;
      }
  return out;
}

function readShellArgs(cmd: string, args: string[], out: NormalCommand, processOutput: (arg: string) => string | null | undefined): void {
  let i = 0;
  let command: string | undefined;
  let stdinFlag = false;
  while (i < args.length) {
    const a = args[i]!;
    if (a === '--' || a === '-') {
      i += a === '--' ? 1 : 0;
      break;
    }
    if (!/^[-+]/.test(a)) break;
    if (/^[-+][a-zA-Z]*c[a-zA-Z]*$/.test(a)) {
      if (args[i + 1] === '--') i += 1;
      command = args[++i] ?? '';
    }
    if (/^-[a-zA-Z]*s[a-zA-Z]*$/.test(a)) stdinFlag = true;
    if (/^[-+]o$|^-O$|^--rcfile$|^--init-file$/.test(a)) i += 1;
    i += 1;
  }
  if (command !== undefined) {
    out.scripts.push({ lang: 'shell', text: command, via: `${cmd} -c` });
    return;
  }
  const file = args[i];
  if (file === undefined || stdinFlag || file === '-' || file === '/dev/stdin') {
    out.stdinScript = 'shell';
    return;
  }
  const content = processOutput(file);
  if (content !== undefined) out.scripts.push({ lang: 'shell', text: content ?? undefined, via: viaFile(cmd, file) });
}

function readInterpreterArgs(
  cmd: string,
  lang: Lang,
  codeFlags: string[],
  args: string[],
  out: NormalCommand,
  processOutput: (arg: string) => string | null | undefined,
): void {
  const code: string[] = [];
  let i = 0;
  let script: string | undefined;
  while (i < args.length) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    if (eq > 0 && codeFlags.includes(a.slice(0, eq))) code.push(a.slice(eq + 1));
    else if (codeFlags.includes(a)) code.push(args[++i] ?? '');
    // perl -pe, -le, -ne; python -Sc: the code flag last in a bundle.
    else if (/^-[a-zA-Z]+$/.test(a) && codeFlags.some((f) => f.length === 2 && a.endsWith(f[1]!))) code.push(args[++i] ?? '');
    else if (a === '-' || a === '--') {
      script = '-';
      break;
    } else if (!a.startsWith('-')) {
      script = a;
      break;
    } else if (/^-[mWXI]$|^--(?:require|import|input-type|loader)$|^-r$/.test(a)) {
      if (a === '-m') return; // python -m module
      i += 1;
    }
    i += 1;
  }
  if (code.length > 0) {
    out.scripts.push({ lang, text: code.join('\n'), via: `${cmd} ${codeFlags[0]}` });
    return;
  }
  if (script === undefined || script === '-' || script === '/dev/stdin') {
    out.stdinScript = lang;
    return;
  }
  const content = processOutput(script);
  if (content !== undefined) out.scripts.push({ lang, text: content ?? undefined, via: viaFile(cmd, script) });
}

// git settings whose value git runs as a shell command (`git -c core.pager='…' log`), by key, lower case.
const gitCommandSettings = /^(?:core\.(?:pager|editor|sshcommand|askpass|fsmonitor|gitproxy)|sequence\.editor|pager\.[^.]+|diff\.external|diff\.[^.]+\.(?:command|textconv)|difftool\.[^.]+\.cmd|mergetool\.[^.]+\.cmd|merge\.[^.]+\.driver|filter\.[^.]+\.(?:clean|smudge|process)|gpg(?:\.[^.]+)?\.program|credential(?:\.[^=]+)?\.helper|interactive\.difffilter|uploadpack\.packobjectshook|remote\.[^.]+\.(?:uploadpack|receivepack))$/;
// Settings that make git read commands from somewhere only known when it runs.
const gitIndirectSettings = /^(?:core\.hookspath|include\.path|includeif\..+\.path)$/;

function withoutGlobalOptions(cmd: string, args: string[], out: NormalCommand): string[] {
  const values = globalValueOptions[cmd] ?? [];
  const aliases = new Map<string, string>();
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-') && args[i] !== '--') {
    const a = args[i]!;
    if (cmd === 'git' && (a === '-c' || a.startsWith('--config-env'))) gitSetting(a === '-c' ? (args[i + 1] ?? '') : a.startsWith('--config-env=') ? a.slice(13) : (args[i + 1] ?? ''), a !== '-c', out, aliases);
    i += values.includes(a.split('=')[0]!) && !a.includes('=') ? 2 : 1;
  }
  const rest = args.slice(i);
  // `git -c alias.x='push --force' x`: the alias is the git command it stands for.
  const alias = rest[0] === undefined ? undefined : aliases.get(rest[0]);
  if (alias !== undefined) return [cmd, ...alias.split(/\s+/).filter(Boolean), ...rest.slice(1)];
  return [cmd, ...rest];
}

/** One `git -c key=value` (or `--config-env key=ENV`, whose value is only known when it runs). */
function gitSetting(setting: string, fromEnv: boolean, out: NormalCommand, aliases: Map<string, string>): void {
  const eq = setting.indexOf('=');
  if (eq <= 0) return;
  const key = setting.slice(0, eq).toLowerCase();
  const value = setting.slice(eq + 1);
  if (key.startsWith('alias.')) {
    if (fromEnv) out.scripts.push({ lang: 'shell', text: undefined, via: `git --config-env ${key}` });
    else if (value.startsWith('!')) out.scripts.push({ lang: 'shell', text: value.slice(1), via: 'git -c alias' });
    else aliases.set(setting.slice(6, eq), value);
    return;
  }
  if (gitIndirectSettings.test(key)) {
    out.scripts.push({ lang: 'shell', text: undefined, via: `git -c ${key}` });
    return;
  }
  if (!gitCommandSettings.test(key) || /^(?:true|false|yes|no|on|off|1|0|)$/i.test(value)) return;
  // A credential helper not starting with ! is a program name (git credential-<name>), not a shell line.
  if (key.endsWith('.helper') && !value.startsWith('!')) return;
  out.scripts.push({ lang: 'shell', text: fromEnv ? undefined : value.replace(/^!/, ''), via: `git -c ${key}` });
}

// Actions and options of find that do not narrow what it finds.
const findNotFilters = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-print', '-print0', '-printf', '-fprint', '-ls', '-depth', '-maxdepth', '-mindepth', '-xdev', '-mount', '-follow', '-noleaf', '-ignore_readdir_race', '-daystart', '-quit']);

function findExecs(args: string[]): string[][] {
  const start = args.findIndex((a) => a.startsWith('-') || a === '(' || a === '!');
  const paths = start < 0 ? args : args.slice(0, start);
  // What it finds: the folder itself and all below it; with a test (-name, -type …), some things inside it.
  let filtered = false;
  for (let i = Math.max(start, 0); i < args.length && start >= 0; i += 1) {
    const a = args[i]!;
    if (['-exec', '-execdir', '-ok', '-okdir'].includes(a)) {
      while (i < args.length && args[i] !== ';' && args[i] !== '+') i += 1;
    } else if (a === '-maxdepth' || a === '-mindepth') i += 1;
    else if (/^-[a-z]/.test(a) && !findNotFilters.has(a)) filtered = true;
  }
  const runs: string[][] = [];
  args.forEach((a, i) => {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(a)) return;
    const end = args.findIndex((b, j) => j > i && (b === ';' || b === '+'));
    const command = args.slice(i + 1, end < 0 ? undefined : end);
    for (const p of paths.length > 0 ? paths : ['.']) runs.push(command.map((w) => w.replaceAll('{}', filtered ? `${p.replace(/\/+$/, '')}/{}` : p)));
  });
  return runs;
}

// Variables whose value a program runs as a shell command (git's pager and editor, ssh's askpass …),
// and the ones bash expands when it starts (`BASH_ENV='$(…)'`).
const commandVariables = new Set(['GIT_PAGER', 'PAGER', 'GIT_EDITOR', 'EDITOR', 'VISUAL', 'GIT_SEQUENCE_EDITOR', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_ASKPASS', 'SSH_ASKPASS', 'SUDO_ASKPASS', 'GIT_EXTERNAL_DIFF', 'MANPAGER', 'LESSOPEN', 'LESSCLOSE', 'PROMPT_COMMAND']);
const expandedAtStart = new Set(['BASH_ENV', 'ENV']);

/** The shell scripts that `NAME=value` assignments before a command hand to it. */
export function scriptsInVariables(assignments: ReadonlyArray<readonly [string, string]>): EmbeddedScript[] {
  const scripts: EmbeddedScript[] = [];
  for (const [name, value] of assignments) {
    if (commandVariables.has(name)) scripts.push({ lang: 'shell', text: value.replace(/^\|/, ''), via: name });
    // bash expands the value as a word when it starts: its command substitutions run.
    else if (expandedAtStart.has(name)) scripts.push({ lang: 'shell', text: `: ${value}`, via: name });
  }
  return scripts;
}

/** The language of a script file from its `#!` line (a shell without one). */
function langOfScript(content: string): Lang {
  const shebang = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(content);
  if (!shebang) return 'shell';
  const program = base(shebang[1] === '/usr/bin/env' || base(shebang[1]!) === 'env' ? (shebang[2] ?? '') : shebang[1]!);
  for (const [name, lang] of interpreters) if (name.test(program)) return lang;
  return 'shell';
}
