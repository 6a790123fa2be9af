// One command's argument list as the guard judges it: wrappers and their
// options taken off (`sudo -u root`, `nice -n 5`, `env X=1`, `timeout 5`,
// `xargs -n1`, `command`, `exec` …), the program's path dropped (`/bin/rm`),
// tools' global options before the subcommand dropped (`git -C dir`,
// `kubectl --context x`, `terraform -chdir=x`), and the text it hands to a
// shell or an interpreter (`sh -c`, `eval`, `trap`, `su -c`, `ssh host …`,
// `python -c`, `node -e`, a script read from standard input) returned as
// scripts to read in turn.
import { type ProcessOutputs, UNKNOWN } from './shell-words.ts';

export type Lang = 'shell' | 'python' | 'node' | 'perl' | 'ruby' | 'php';

export interface EmbeddedScript {
  lang: Lang;
  /** undefined: the text is only known when the command runs. */
  text: string | undefined;
  /** How it is handed over, for the finding: `sh -c`, `eval`, `python -c`, `stdin of sh`. */
  via: string;
}

export interface NormalCommand {
  argv: string[];
  scripts: EmbeddedScript[];
  /** Commands it runs itself (`find -exec …`), judged as commands of their own. */
  nested: string[][];
  /** The program reads its standard input as a script in this language. */
  stdinScript?: Lang;
}

/** Standard input of a command: known text, nothing, or produced by something only known when run. */
export type Stdin = { kind: 'none' } | { kind: 'text'; text: string } | { kind: 'unknown'; from: string };

const base = (cmd: string) => cmd.replace(/^.*\//, '');

// Wrapper → options that take a value. A wrapper's own options are dropped with their values.
const wrapperValueOptions: Record<string, string[]> = {
  sudo: ['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U', '-T', '--user', '--group', '--chdir', '--host', '--prompt', '--role', '--type', '--other-user', '--command-timeout', '--close-from'],
  doas: ['-u', '-C'],
  nice: ['-n', '--adjustment'],
  ionice: ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata'],
  timeout: ['-s', '-k', '--signal', '--kill-after'],
  stdbuf: ['-i', '-o', '-e', '--input', '--output', '--error'],
  env: ['-u', '-C', '--unset', '--chdir', '-S', '--split-string'],
  xargs: ['-I', '-L', '-n', '-P', '-s', '-d', '-E', '-a', '--max-args', '--max-lines', '--max-procs', '--max-chars', '--delimiter', '--eof', '--arg-file', '--replace', '--process-slot-var'],
  exec: ['-a'],
  command: [],
  builtin: [],
  nohup: [],
  time: ['-f', '-o', '--format', '--output'],
  setsid: [],
  chronic: [],
  unbuffer: [],
  busybox: [],
  runuser: ['-u', '-g', '-G', '--user', '--group', '--supp-group'],
  chroot: ['--userspec', '--groups'],
  flock: ['-w', '-E', '--timeout', '--conflict-exit-code'],
  caffeinate: ['-t', '-w'],
  catchsegv: [],
  watch: ['-n', '-d', '--interval', '--differences'],
  // Package runners run the named tool: `npx rimraf ~` is rimraf.
  npx: ['-p', '--package', '-c', '--call'],
  bunx: ['-p', '--package'],
  pnpx: [],
};

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
export function normalise(argvIn: readonly string[], stdin: Stdin, processes: ProcessOutputs): NormalCommand {
  const processOutput = (arg: string) => processes.outputOf(arg);
  const out: NormalCommand = { argv: [], scripts: [], nested: [] };
  let argv = [...argvIn];
  for (let guard = 0; guard < 16 && argv.length > 0; guard += 1) {
    const cmd = base(argv[0]!);
    const args = argv.slice(1);
    const values = wrapperValueOptions[cmd];
    if (values === undefined) break;
    if (cmd === 'command' && args.some((a) => /^-[pvV]*[vV]/.test(a))) return out; // `command -v rm` only looks rm up
    if (cmd === 'env') {
      const split = args.findIndex((a) => a === '-S' || a === '--split-string' || a.startsWith('--split-string=') || /^-S./.test(a));
      if (split >= 0) {
        const a = args[split]!;
        const text = a === '-S' || a === '--split-string' ? args[split + 1] : a.replace(/^--split-string=|^-S/, '');
        argv = [...(text ?? '').split(/\s+/).filter(Boolean), ...args.slice(split + (a === '-S' || a === '--split-string' ? 2 : 1))];
        continue;
      }
    }
    if (cmd === 'watch') {
      out.scripts.push({ lang: 'shell', text: args.slice(skipOptions(args, values)).join(' '), via: 'watch' });
      return out;
    }
    if (cmd === 'npx' && args.some((a) => a === '-c' || a === '--call')) {
      const c = args.findIndex((a) => a === '-c' || a === '--call');
      out.scripts.push({ lang: 'shell', text: args[c + 1], via: 'npx -c' });
      return out;
    }
    let i = skipOptions(args, values);
    if (cmd === 'env') while (i < args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!)) i += 1;
    if (cmd === 'timeout') i += 1; // the duration
    if (cmd === 'chroot') i += 1; // the new root
    if (cmd === 'flock') {
      const c = args.findIndex((a) => a === '-c' || a === '--command');
      if (c >= 0) {
        out.scripts.push({ lang: 'shell', text: args[c + 1], via: 'flock -c' });
        return out;
      }
      i += 1; // the lock file
    }
    if (cmd === 'nice' && /^-\d+$/.test(args[0] ?? '')) i = Math.max(i, 1);
    const rest = args.slice(i);
    if (cmd === 'xargs') {
      const fromFile = args.some((a) => a === '-a' || a.startsWith('--arg-file'));
      const words = stdin.kind === 'text' && !fromFile ? stdin.text.split(/\s+/).filter(Boolean) : [UNKNOWN];
      argv = [...(rest.length > 0 ? rest : ['echo']), ...words];
      continue;
    }
    argv = rest;
  }
  if (argv.length === 0) return out;
  const cmd = base(argv[0]!);
  const args = argv.slice(1);
  out.argv = [cmd, ...args];

  if (cmd === 'eval') out.scripts.push({ lang: 'shell', text: args.join(' '), via: 'eval' });
  else if (cmd === 'trap' && args.length > 1 && !args[0]!.startsWith('-')) out.scripts.push({ lang: 'shell', text: args[0], via: 'trap' });
  else if (cmd === 'source' || cmd === '.') {
    const content = args[0] === undefined ? undefined : processOutput(args[0]);
    if (content !== undefined) out.scripts.push({ lang: 'shell', text: content ?? undefined, via: `${cmd} <(…)` });
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
  if (content !== undefined) out.scripts.push({ lang: 'shell', text: content ?? undefined, via: `${cmd} <(…)` });
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
  if (content !== undefined) out.scripts.push({ lang, text: content ?? undefined, via: `${cmd} <(…)` });
}

function withoutGlobalOptions(cmd: string, args: string[], out: NormalCommand): string[] {
  const values = globalValueOptions[cmd] ?? [];
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-') && args[i] !== '--') {
    const a = args[i]!;
    // git -c alias.x='!cmd': an alias that runs a shell command.
    if (cmd === 'git' && a === '-c') {
      const m = /^alias\.[^=]+=!(.*)$/s.exec(args[i + 1] ?? '');
      if (m) out.scripts.push({ lang: 'shell', text: m[1], via: 'git -c alias' });
    }
    i += values.includes(a.split('=')[0]!) && !a.includes('=') ? 2 : 1;
  }
  return [cmd, ...args.slice(i)];
}

function findExecs(args: string[]): string[][] {
  const start = args.findIndex((a) => a.startsWith('-') || a === '(' || a === '!');
  const paths = (start < 0 ? args : args.slice(0, start));
  const runs: string[][] = [];
  args.forEach((a, i) => {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(a)) return;
    const end = args.findIndex((b, j) => j > i && (b === ';' || b === '+'));
    const command = args.slice(i + 1, end < 0 ? undefined : end);
    // {} is each file found: judged as the folders find starts from (or `.`).
    for (const p of paths.length > 0 ? paths : ['.']) runs.push(command.map((w) => w.replaceAll('{}', p)));
  });
  return runs;
}
