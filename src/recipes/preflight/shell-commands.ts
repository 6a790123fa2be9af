// The commands a shell snippet would run, as argument lists after variable
// expansion, found with a real shell parser (mvdan/sh, as the synchronous
// mvdan-sh build: the preflight runs before anything starts and is
// synchronous). `CMD="rm -rf /"; $CMD` yields ["rm", "-rf", "/"]; a
// variable the run does not set expands to "" as the shell would, so
// `rm -rf "$UNSET/"` yields ["rm", "-rf", "/"]; `sh -c '…'` and `eval` are
// read too. Heredoc bodies and every expanded word are kept as `texts` for
// the SQL checks.
import { createRequire } from 'node:module';

// biome-ignore lint/suspicious/noExplicitAny: mvdan-sh is GopherJS output without types
type Node = any;

interface Syntax {
  NewParser(): { Parse(src: string, name: string): Node };
  Walk(node: Node, visit: (node: Node) => boolean): void;
  NodeType(node: Node): string;
}

let syntax: Syntax | undefined;
function parser(): Syntax {
  syntax ??= (createRequire(import.meta.url)('mvdan-sh') as { syntax: Syntax }).syntax;
  return syntax;
}

export interface ShellCommand {
  argv: string[];
  /** 1-based line in the snippet. */
  line: number;
}

export interface ShellReading {
  commands: ShellCommand[];
  /** Expanded words and heredoc bodies: where SQL may hide. */
  texts: string[];
  /** The parser's complaint when the snippet is not shell. */
  error?: string;
}

/** What `$HOME` and `~` expand to for the checks: kept symbolic, the checks know it. */
export const HOME = '$HOME';
const maxDepth = 4;

export function readShell(source: string, vars: Readonly<Record<string, string>>, depth = 0): ShellReading {
  const reading: ShellReading = { commands: [], texts: [] };
  const sx = parser();
  let file: Node;
  try {
    file = sx.NewParser().Parse(source, 'snippet');
  } catch (error) {
    reading.error = String((error as { message?: string }).message ?? error);
    return reading;
  }
  const known: Record<string, string> = { ...vars };
  const expand = (word: Node): string[] => expandWord(sx, word, known);
  const assign = (a: Node) => {
    if (!a?.Name) return;
    known[a.Name.Value] = a.Value ? expand(a.Value).join(' ') : '';
  };
  sx.Walk(file, (node: Node) => {
    if (!node) return true;
    const type = sx.NodeType(node);
    if (type === 'DeclClause') for (const a of node.Args ?? []) assign(a);
    if (type === 'Redirect' && node.Hdoc) reading.texts.push(expandWord(sx, node.Hdoc, known, true).join(' '));
    if (type !== 'CallExpr') return true;
    for (const a of node.Assigns ?? []) assign(a);
    const argv = (node.Args ?? []).flatMap(expand);
    if (argv.length === 0) return true;
    reading.texts.push(...argv);
    const line = Number(node.Pos().Line());
    reading.commands.push({ argv, line });
    // A command given as a string to another shell is read as well.
    const inner = innerScript(argv);
    if (inner !== undefined && depth < maxDepth) {
      const nested = readShell(inner, known, depth + 1);
      for (const c of nested.commands) reading.commands.push({ argv: c.argv, line });
      reading.texts.push(...nested.texts);
    }
    return true;
  });
  return reading;
}

const wrappers = new Set(['sudo', 'doas', 'nohup', 'time', 'nice', 'command', 'exec', 'builtin', 'env', 'xargs', 'timeout', 'stdbuf']);

/** The argv with wrappers (`sudo`, `env X=1`, `timeout 5`) taken off. */
export function unwrap(argv: readonly string[]): string[] {
  let i = 0;
  while (i < argv.length && wrappers.has(argv[i]!)) {
    const wrapper = argv[i++]!;
    while (i < argv.length && (argv[i]!.startsWith('-') || (wrapper === 'env' && argv[i]!.includes('=')))) i++;
    if (wrapper === 'timeout' && i < argv.length) i++;
  }
  return argv.slice(i);
}

function innerScript(argv: readonly string[]): string | undefined {
  const [cmd, ...rest] = unwrap(argv);
  if (cmd === 'eval') return rest.join(' ');
  if (cmd && /^(?:ba|z|da|k)?sh$/.test(cmd.replace(/^.*\//, ''))) {
    const c = rest.findIndex((a) => /^-[a-z]*c[a-z]*$/.test(a));
    if (c >= 0 && rest[c + 1] !== undefined) return rest[c + 1];
  }
  return undefined;
}

function expandWord(sx: Syntax, word: Node, known: Record<string, string>, quoted = false): string[] {
  // Unquoted expansions split on blanks, the way `$CMD` becomes a command and its arguments.
  const fields: string[] = [''];
  let any = false;
  const add = (text: string, split: boolean) => {
    any = true;
    if (!split) {
      fields[fields.length - 1] += text;
      return;
    }
    const parts = text.split(/[ \t\n]+/);
    fields[fields.length - 1] += parts[0]!;
    for (const p of parts.slice(1)) fields.push(p);
  };
  const part = (p: Node, inQuotes: boolean) => {
    switch (sx.NodeType(p)) {
      case 'Lit':
        add(inQuotes ? p.Value : p.Value.replace(/^~(?=\/|$)/, HOME), false);
        break;
      case 'SglQuoted':
        add(p.Value, false);
        break;
      case 'DblQuoted':
        for (const q of p.Parts ?? []) part(q, true);
        any = true;
        break;
      case 'ParamExp': {
        const name: string = p.Param?.Value ?? '';
        let value = name === 'HOME' ? HOME : known[name];
        if (value === undefined && p.Exp?.Word) value = expandWord(sx, p.Exp.Word, known, true).join(' ');
        add(value ?? '', !inQuotes);
        break;
      }
      case 'CmdSubst':
        add('$(…)', false);
        break;
      default:
        add('…', false);
    }
  };
  for (const p of word?.Parts ?? []) part(p, quoted);
  return any ? fields.filter((f, i) => f !== '' || fields.length === 1 || i === 0) : [];
}
