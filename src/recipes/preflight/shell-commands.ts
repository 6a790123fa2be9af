// The commands a shell snippet would run, found with a real shell parser
// (mvdan/sh, as the synchronous mvdan-sh build: the preflight runs before
// anything starts and is synchronous), each normalised (command-normalise.ts)
// with the folder it runs in. The reader follows the script the way the shell
// would: variables assigned along the way (`CMD="rm -rf /"; $CMD`), `cd`,
// functions and aliases defined in it, `for` lists, command substitutions
// (run, and their output used where it is known), pipes and heredocs into
// shells (`echo … | base64 -d | sh`, `sh <<EOF`), `sh -c`, `eval`, `trap`,
// scripts written and run in the same line (`echo … > x.sh && bash x.sh`),
// and variables whose value a program runs (`GIT_PAGER='…' git log`).
// Text it hands to python, node, perl, ruby or php is kept as `code`; what
// only the running command could tell (`curl … | sh`) is kept as `unresolved`;
// what a SQL client runs as `sql`. A program it does not know that is given
// a command line (`frob rm -rf /`) has that line read as a command it may
// run (`guess`).
import { type Lang, normalise, scriptsInVariables, type Stdin } from './command-normalise.ts';
import { guessedCommands, isSqlClient } from './known-commands.ts';
import { joinPath } from './paths.ts';
import { WrittenFiles } from './written-files.ts';
import { staticOutput } from './static-output.ts';
import { parser } from './shell-parser.ts';
import { expandWord, HOME, type Node, ProcessOutputs, type Syntax, UNKNOWN, type WordScope } from './shell-words.ts';

export { joinPath } from './paths.ts';
export { HOME, UNKNOWN } from './shell-words.ts';

export interface ShellCommand {
  argv: string[];
  /** 1-based line in the snippet. */
  line: number;
  /** The folder it runs in: relative to the workspace (`.`, `build`), absolute, or `$HOME/…`; UNKNOWN inside when not known. */
  cwd: string;
  /** Set when only a program the guard does not know (named here) may run it: what it finds is "cannot tell". */
  guess?: string;
}

export interface ShellReading {
  commands: ShellCommand[];
  /** Code handed to an interpreter (`python -c`, `node -e`, a heredoc into `python -`). */
  code: Array<{ lang: Exclude<Lang, 'shell'>; text: string; line: number; cwd: string; guess?: string }>;
  /** What SQL clients run: their arguments and their input. */
  sql: Array<{ text: string; line: number }>;
  /** Scripts only known when run: `curl … | sh`, `eval "$(…)"`. */
  unresolved: Array<{ line: number; what: string }>;
  /** Files written by redirection (`> /dev/sda`). */
  writes: Array<{ path: string; line: number }>;
  /** Expanded words and heredoc bodies: where SQL may hide. */
  texts: string[];
  /** The parser's complaint when the snippet is not shell. */
  error?: string;
}

interface Scope {
  vars: Record<string, string>;
  positional: string[] | undefined;
  cwd: string;
  functions: Map<string, Node>;
  aliases: Map<string, string>;
  depth: number;
  /** Aliases and functions being expanded: bash expands neither again inside itself. */
  active: ReadonlySet<string>;
  /** The line in the outermost snippet that nested reading is attributed to. */
  line: number | undefined;
  /** A program the guard does not know that may run what is read here. */
  guess?: string;
}

const maxDepth = 8;
const maxCommands = 5000;
const pipeOp = new Set([12, 13]);
const heredocOps = new Set([61, 62]);
const herestringOp = 63;
const inputOp = 56;
// >, >>, <>, >&, >|, &>, &>>
const outputOps = new Set([54, 55, 57, 59, 60, 64, 65]);

const fork = (s: Scope): Scope => ({ ...s, vars: { ...s.vars }, functions: new Map(s.functions), aliases: new Map(s.aliases) });

export function readShell(source: string, vars: Readonly<Record<string, string>>, cwd = '.'): ShellReading {
  const reading: ShellReading = { commands: [], code: [], sql: [], unresolved: [], writes: [], texts: [] };
  const scope: Scope = { vars: { ...vars }, positional: undefined, cwd, functions: new Map(), aliases: new Map(), depth: 0, active: new Set(), line: undefined };
  new Reader(parser(), reading).script(source, scope);
  return reading;
}

class Reader {
  private readonly called = new Set<string>();
  private readonly processes = new ProcessOutputs();
  /** Files the line wrote (`echo … > x.sh`), read when it runs them. */
  private readonly files = new WrittenFiles();
  constructor(
    private readonly sx: Syntax,
    private readonly reading: ShellReading,
  ) {}

  script(source: string, scope: Scope): void {
    let file: Node;
    try {
      file = this.sx.NewParser().Parse(source, 'snippet');
    } catch (error) {
      if (scope.depth === 0) this.reading.error = String((error as { message?: string }).message ?? error);
      else this.unresolved(scope, 1, 'a script that does not parse as shell');
      return;
    }
    this.stmts(file.Stmts ?? [], scope, { kind: 'none' });
    // Functions defined and never called still say what the script is for.
    if (scope.depth === 0)
      for (const [name, body] of scope.functions) if (!this.called.has(name)) this.stmt(body, { ...fork(scope), positional: [] }, { kind: 'none' });
  }

  private lineOf(node: Node, scope: Scope): number {
    return scope.line ?? Number(node.Pos().Line());
  }

  private unresolved(scope: Scope, line: number, what: string): void {
    this.reading.unresolved.push({ line: scope.line ?? line, what });
  }

  private words(words: Node[], scope: Scope): string[] {
    const wordScope: WordScope = {
      vars: scope.vars,
      positional: scope.positional,
      cwd: scope.cwd,
      processes: this.processes,
      substitute: (stmts) => this.stmts(stmts, fork(scope), { kind: 'none' }).text,
    };
    return words.flatMap((w) => expandWord(this.sx, w, wordScope));
  }

  /** Runs statements in order; returns the output of the last one when it is known. */
  private stmts(stmts: Node[], scope: Scope, stdin: Stdin): { text?: string; from: string } {
    let last: { text?: string; from: string } = { text: '', from: '' };
    for (const s of stmts) last = this.stmt(s, scope, stdin);
    return last;
  }

  private stmt(stmt: Node, scope: Scope, stdinIn: Stdin): { text?: string; from: string } {
    if (!stmt || this.reading.commands.length > maxCommands) return { from: '' };
    let stdin = stdinIn;
    const written: Array<{ path: string; append: boolean; stdout: boolean }> = [];
    for (const r of stmt.Redirs ?? []) {
      if (heredocOps.has(r.Op) && r.Hdoc) {
        const text = this.words([r.Hdoc], scope).join(' ');
        this.reading.texts.push(text);
        stdin = { kind: 'text', text: `${text}` };
      } else if (r.Op === herestringOp) stdin = { kind: 'text', text: `${this.words([r.Word], scope).join(' ')}\n` };
      else if (outputOps.has(r.Op)) {
        const path = this.words([r.Word], scope).join(' ');
        this.reading.writes.push({ path, line: this.lineOf(r, scope) });
        // > and >> of standard output (no fd, or 1) write what the command prints.
        const fd = r.N?.Value;
        written.push({ path, append: r.Op === 55, stdout: (fd === undefined || fd === '1') && (r.Op === 54 || r.Op === 55 || r.Op === 60) });
      } else if (r.Op === inputOp) {
        const from = this.words([r.Word], scope).join(' ');
        stdin = from === '/dev/null' ? { kind: 'none' } : { kind: 'unknown', from: `< ${from}` };
      }
    }
    const result = this.command(stmt.Cmd, scope, stdin);
    for (const w of written) this.files.write(joinPath(scope.cwd, w.path), w.stdout ? result.text : undefined, w.append);
    return written.some((w) => w.stdout) ? { text: '', from: result.from } : result;
  }

  private command(cmd: Node, scope: Scope, stdin: Stdin): { text?: string; from: string } {
    if (!cmd) return { from: '' };
    const sx = this.sx;
    switch (sx.NodeType(cmd)) {
      case 'CallExpr':
        return this.call(cmd, scope, stdin);
      case 'BinaryCmd': {
        if (pipeOp.has(cmd.Op)) {
          const left = this.stmt(cmd.X, fork(scope), stdin);
          const piped: Stdin = left.text !== undefined ? { kind: 'text', text: left.text } : { kind: 'unknown', from: left.from };
          return this.stmt(cmd.Y, fork(scope), piped);
        }
        this.stmt(cmd.X, scope, stdin);
        return this.stmt(cmd.Y, scope, stdin);
      }
      case 'Subshell':
        return this.stmts(cmd.Stmts ?? [], fork(scope), stdin);
      case 'Block':
        return this.stmts(cmd.Stmts ?? [], scope, stdin);
      case 'IfClause':
        this.stmts(cmd.Cond ?? [], scope, stdin);
        this.stmts(cmd.Then ?? [], scope, stdin);
        if (cmd.Else) this.command(cmd.Else, scope, stdin);
        return { from: 'if' };
      case 'WhileClause':
        // `while read d; do …` reads d from input only known when run.
        this.stmts(cmd.Cond ?? [], scope, stdin);
        this.stmts(cmd.Do ?? [], scope, stdin);
        return { from: 'while' };
      case 'ForClause': {
        const loop = cmd.Loop;
        if (sx.NodeType(loop) !== 'WordIter') {
          this.stmts(cmd.Do ?? [], scope, stdin);
          return { from: 'for' };
        }
        const items = this.words(loop.Items ?? [], scope);
        const list = items.length > 0 ? items.slice(0, 16) : [''];
        for (const item of list) {
          scope.vars[loop.Name.Value] = item;
          this.stmts(cmd.Do ?? [], scope, stdin);
        }
        return { from: 'for' };
      }
      case 'CaseClause':
        for (const item of cmd.Items ?? []) this.stmts(item.Stmts ?? [], scope, stdin);
        return { from: 'case' };
      case 'FuncDecl':
        scope.functions.set(cmd.Name.Value, cmd.Body);
        return { text: '', from: '' };
      case 'DeclClause': {
        for (const a of cmd.Args ?? []) this.assign(a, scope);
        // `export GIT_PAGER='…'`: every later program may run it.
        const assigned = (cmd.Args ?? []).filter((a: Node) => a?.Name && a.Value).map((a: Node) => [a.Name.Value, scope.vars[a.Name.Value] ?? ''] as const);
        const line = this.lineOf(cmd, scope);
        for (const s of scriptsInVariables(assigned)) this.embedded(s.lang, s.text, s.via, { ...fork(scope), depth: scope.depth + 1, line }, line);
        return { text: '', from: '' };
      }
      case 'TimeClause':
      case 'CoprocClause':
        return this.stmt(cmd.Stmt, scope, stdin);
      default: {
        // Tests, arithmetic, let: only command substitutions inside them run.
        sx.Walk(cmd, (node: Node) => {
          if (node && sx.NodeType(node) === 'CmdSubst') this.stmts(node.Stmts ?? [], fork(scope), { kind: 'none' });
          return true;
        });
        return { from: '' };
      }
    }
  }

  private assign(a: Node, scope: Scope): void {
    if (!a?.Name) return;
    scope.vars[a.Name.Value] = a.Value ? this.words([a.Value], scope).join(' ') : a.Array ? UNKNOWN : '';
  }

  private call(call: Node, scope: Scope, stdin: Stdin): { text?: string; from: string } {
    const line = this.lineOf(call, scope);
    const args: Node[] = call.Args ?? [];
    if (args.length === 0) {
      for (const a of call.Assigns ?? []) this.assign(a, scope);
      return { text: '', from: '' };
    }
    const argv = this.words(args, scope);
    if (argv.length === 0) return { text: '', from: '' };
    this.reading.texts.push(...argv);
    // `GIT_PAGER='…' git log`: a variable the command runs.
    const prefixed = (call.Assigns ?? []).filter((a: Node) => a?.Name && a.Value).map((a: Node) => [a.Name.Value, this.words([a.Value], scope).join(' ')] as const);
    for (const s of scriptsInVariables(prefixed)) this.embedded(s.lang, s.text, s.via, { ...fork(scope), depth: scope.depth + 1, line }, line);
    const first = args[0]?.Parts?.[0];
    const plainName = args[0]?.Parts?.length === 1 && this.sx.NodeType(first) === 'Lit' && !first.Value.includes('\\');
    const alias = plainName && !scope.active.has(`alias ${argv[0]}`) ? scope.aliases.get(argv[0]!) : undefined;
    if (alias !== undefined && scope.depth < maxDepth) {
      const quoted = argv.slice(1).map((a) => `'${a.replaceAll("'", `'\\''`)}'`);
      this.script(`${alias} ${quoted.join(' ')}`, { ...scope, depth: scope.depth + 1, active: new Set([...scope.active, `alias ${argv[0]}`]), line });
      return { from: argv[0]! };
    }
    const fn = scope.functions.get(argv[0]!);
    // A function calling itself does nothing new to find: its body is read once per chain of calls.
    if (fn && scope.depth < maxDepth && !scope.active.has(`function ${argv[0]}`)) {
      this.called.add(argv[0]!);
      const active = new Set([...scope.active, `function ${argv[0]}`]);
      this.stmt(fn, { ...fork(scope), positional: argv.slice(1), depth: scope.depth + 1, active, line }, stdin);
    }
    return this.run(argv, scope, stdin, line);
  }

  /** One command after expansion: builtins that change the reading, then the normalised command. */
  private run(argv: string[], scope: Scope, stdin: Stdin, line: number): { text?: string; from: string } {
    const [name, ...rest] = argv;
    switch (name) {
      case 'cd':
      case 'pushd': {
        const to = rest.filter((a) => !/^-[LPe@]+$/.test(a))[0];
        scope.cwd = to === undefined ? HOME : to === '-' ? UNKNOWN : joinPath(scope.cwd, to);
        return { text: '', from: name };
      }
      case 'popd':
        scope.cwd = UNKNOWN;
        return { text: '', from: name };
      case 'alias':
        for (const a of rest) {
          const eq = a.indexOf('=');
          if (eq > 0) scope.aliases.set(a.slice(0, eq), a.slice(eq + 1));
        }
        return { text: '', from: name };
      case 'unalias':
        for (const a of rest) scope.aliases.delete(a);
        return { text: '', from: name };
      case 'read':
      case 'mapfile':
      case 'readarray':
        for (const a of rest) if (/^[A-Za-z_]\w*$/.test(a)) scope.vars[a] = UNKNOWN;
        return { text: '', from: name };
      case 'set':
        if (rest[0] === '--') scope.positional = rest.slice(1);
        return { text: '', from: name };
      case 'unset':
        for (const a of rest) delete scope.vars[a];
        return { text: '', from: name };
    }
    const normal = normalise(argv, stdin, (arg) => {
      const output = this.processes.outputOf(arg);
      return output !== undefined ? output : this.files.contentOf(joinPath(scope.cwd, arg));
    });
    const cwd = normal.cwd === undefined ? scope.cwd : joinPath(scope.cwd, normal.cwd);
    if (normal.argv.length > 0) this.reading.commands.push({ argv: normal.argv, line, cwd, ...(scope.guess ? { guess: scope.guess } : {}) });
    if (normal.argv[0]?.includes(UNKNOWN))
      this.unresolved(scope, line, 'a command whose name is only known when it runs');
    const inner = { ...fork(scope), cwd, depth: scope.depth + 1, line };
    this.files.writtenBy(normal.argv, stdin, cwd);
    if (normal.argv[0] && isSqlClient(normal.argv[0]))
      this.reading.sql.push({ text: [...normal.argv.slice(1), stdin.kind === 'text' ? stdin.text : ''].join('\n'), line: scope.line ?? line });
    if (scope.depth < maxDepth)
      for (const suffix of guessedCommands(normal.argv)) this.run(suffix, { ...inner, guess: scope.guess ?? normal.argv[0] }, { kind: 'none' }, line);
    for (const s of normal.scripts) this.embedded(s.lang, s.text, s.via, inner, line);
    if (normal.stdinScript) {
      const via = `${stdin.kind === 'unknown' ? `${stdin.from} | ` : ''}${normal.argv[0]}`;
      if (stdin.kind === 'text') this.embedded(normal.stdinScript, stdin.text, `stdin of ${normal.argv[0]}`, inner, line);
      else if (stdin.kind === 'unknown') this.embedded(normal.stdinScript, undefined, via, inner, line);
    }
    for (const n of normal.nested) if (scope.depth < maxDepth) this.run(n, inner, { kind: 'none' }, line);
    return { text: staticOutput(normal.argv, stdin, scope.cwd), from: normal.argv[0] ?? name! };
  }

  private embedded(lang: Lang, text: string | undefined, via: string, scope: Scope, line: number): void {
    if (text === undefined || text.includes(UNKNOWN)) {
      this.unresolved(scope, line, `${lang === 'shell' ? 'a script' : `${lang} code`} only known when it runs (${via})`);
      return;
    }
    this.reading.texts.push(text);
    if (lang !== 'shell') this.reading.code.push({ lang, text, line, cwd: scope.cwd, ...(scope.guess ? { guess: scope.guess } : {}) });
    else if (scope.depth < maxDepth) this.script(text, scope);
    else this.unresolved(scope, line, `a script nested deeper than ${maxDepth} levels (${via})`);
  }
}
