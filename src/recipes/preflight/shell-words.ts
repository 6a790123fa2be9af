// Word expansion for the destructive-intent guard: what a word of a parsed
// shell command (mvdan-sh) becomes, the way the shell would expand it —
// escapes and quotes removed, `~` and `$HOME` kept symbolic, variables the
// reader knows substituted (an unset one is "" as in the shell), command
// substitutions evaluated where their output is known statically, braces
// expanded. What cannot be known before running is written as UNKNOWN, so
// the rules can say "cannot tell" instead of guessing.

// biome-ignore lint/suspicious/noExplicitAny: mvdan-sh is GopherJS output without types
export type Node = any;

export interface Syntax {
  NewParser(): { Parse(src: string, name: string): Node };
  Walk(node: Node, visit: (node: Node) => boolean): void;
  NodeType(node: Node): string;
}

/** Stands for text only known when the command runs (output of a command, input, a random number). */
export const UNKNOWN = '\u0000';
/** What `$HOME` and `~` expand to for the checks: kept symbolic, the checks know it. */
export const HOME = '$HOME';

export interface WordScope {
  vars: Record<string, string>;
  /** $1, $2 … inside a function (undefined at the top: unset, so ""). */
  positional: string[] | undefined;
  cwd: string;
  processes: ProcessOutputs;
  /** Runs a command or process substitution; returns its output when known statically. */
  substitute(stmts: Node[], kind: 'command' | 'process'): string | undefined;
}

// Operators of ${NAME<op>WORD} in mvdan-sh's token numbering.
const EXP = { alt: 68, altColon: 69, def: 70, defColon: 71, errQ: 72, errQColon: 73, assign: 74, assignColon: 75, remLargeSuffix: 76, remSuffix: 77, remPrefix: 78, remLargePrefix: 79 } as const;

const unescapeUnquoted = (s: string) => s.replace(/\\\n/g, '').replace(/\\(.)/gs, '$1');
const unescapeDouble = (s: string) => s.replace(/\\\n/g, '').replace(/\\([$`"\\])/g, '$1');

function ansiC(s: string): string {
  const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };
  return s.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)/gs, (m, e: string) => {
    if (/^[xuU]/.test(e)) return String.fromCodePoint(Number.parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCharCode(Number.parseInt(e, 8));
    return map[e] ?? m;
  });
}

/** `a{b,c}d` → `abd acd` (nested too); at most 64 results. */
export function expandBraces(word: string): string[] {
  const open = findBrace(word);
  if (!open) return [word];
  const { start, end, alternatives } = open;
  const out: string[] = [];
  for (const alt of alternatives)
    for (const rest of expandBraces(word.slice(0, start) + alt + word.slice(end + 1))) if (out.length < 64) out.push(rest);
  return out;
}

function findBrace(word: string): { start: number; end: number; alternatives: string[] } | undefined {
  for (let start = word.indexOf('{'); start >= 0; start = word.indexOf('{', start + 1)) {
    let depth = 0;
    const cuts: number[] = [];
    for (let i = start; i < word.length; i += 1) {
      const c = word[i];
      if (c === '{') depth += 1;
      else if (c === '}' && --depth === 0) {
        if (cuts.length === 0) break;
        const pieces = [start, ...cuts, i].slice(0, -1).map((from, k) => word.slice(from + 1, [...cuts, i][k]));
        return { start, end: i, alternatives: pieces };
      } else if (c === ',' && depth === 1) cuts.push(i);
    }
  }
  return undefined;
}

/** The fields a word expands to. */
export function expandWord(sx: Syntax, word: Node, scope: WordScope, quoted = false): string[] {
  // Unquoted expansions split on blanks, the way `$CMD` becomes a command and its arguments.
  const fields: string[] = [''];
  let any = false;
  let braces = false;
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
  const parts: Node[] = word?.Parts ?? [];
  const part = (p: Node, inQuotes: boolean, first: boolean) => {
    switch (sx.NodeType(p)) {
      case 'Lit': {
        if (inQuotes) return add(unescapeDouble(p.Value), false);
        let text = unescapeUnquoted(p.Value);
        // ~ and ~user at the start of a word: a home folder (another user's is as vital as ours).
        if (first && /^~[\w.-]*(?=\/|$)/.test(p.Value)) text = text.replace(/^~[\w.-]*/, HOME);
        if (/[{].*,.*[}]/.test(text)) braces = true;
        return add(text, false);
      }
      case 'SglQuoted':
        return add(p.Dollar ? ansiC(p.Value) : p.Value, false);
      case 'DblQuoted':
        any = true;
        for (const q of p.Parts ?? []) part(q, true, false);
        return;
      case 'ParamExp': {
        const value = paramValue(sx, p, scope, inQuotes);
        if (Array.isArray(value)) {
          // "$@": one field per positional parameter.
          for (const [i, v] of value.entries()) {
            if (i === 0) add(v, false);
            else fields.push(v);
          }
          if (value.length === 0) any = true;
          return;
        }
        return add(value, !inQuotes);
      }
      case 'CmdSubst':
        return add((scope.substitute(p.Stmts ?? [], 'command') ?? UNKNOWN).replace(/\n+$/, ''), !inQuotes);
      case 'ProcSubst':
        return add(scope.processes.path(scope.substitute(p.Stmts ?? [], 'process')), false);
      default:
        // Arithmetic, extended globs: a number or a pattern only known when run.
        return add(UNKNOWN, false);
    }
  };
  parts.forEach((p, i) => {
    part(p, quoted, i === 0);
  });
  if (!any) return [];
  const kept = fields.filter((f, i) => f !== '' || fields.length === 1 || i === 0);
  return braces ? kept.flatMap(expandBraces) : kept;
}

function paramValue(sx: Syntax, p: Node, scope: WordScope, inQuotes: boolean): string | string[] {
  const name: string = p.Param?.Value ?? '';
  const positional = scope.positional ?? [];
  if (p.Length || p.Slice || p.Repl || p.Index) return UNKNOWN;
  if (name === '@' || name === '*') return inQuotes && name === '@' ? positional : positional.join(' ');
  if (name === '#') return String(positional.length);
  let value: string | undefined;
  if (/^[1-9]$/.test(name)) value = positional[Number(name) - 1];
  else if (name === 'HOME') value = HOME;
  else if (name === 'PWD') value = scope.cwd;
  // A build command runs as `sh -c`, where $0 is "sh".
  else if (name === '0') value = 'sh';
  else if (['?', '$', '!', 'RANDOM', 'SRANDOM', 'BASHPID', 'PPID', 'LINENO', 'SECONDS', 'REPLY', '_'].includes(name)) value = UNKNOWN;
  else value = scope.vars[name];
  if (p.Excl) value = value === undefined ? undefined : value.includes(UNKNOWN) ? UNKNOWN : scope.vars[value];
  const op: number | undefined = p.Exp?.Op;
  if (op === undefined) return value ?? '';
  const word = () => expandWord(sx, p.Exp.Word, scope, true).join(' ');
  const empty = value === undefined || value === '';
  switch (op) {
    case EXP.def:
    case EXP.assign:
    case EXP.errQ:
      return value === undefined ? (op === EXP.errQ ? '' : word()) : value;
    case EXP.defColon:
    case EXP.assignColon:
    case EXP.errQColon:
      return empty ? (op === EXP.errQColon ? '' : word()) : value!;
    case EXP.alt:
      return value === undefined ? '' : word();
    case EXP.altColon:
      return empty ? '' : word();
    case EXP.remPrefix:
    case EXP.remLargePrefix:
    case EXP.remSuffix:
    case EXP.remLargeSuffix: {
      if (value === undefined) return '';
      const pattern = word();
      if (/[*?[]/.test(pattern) || value.includes(UNKNOWN)) return UNKNOWN;
      if (op === EXP.remPrefix || op === EXP.remLargePrefix) return value.startsWith(pattern) ? value.slice(pattern.length) : value;
      return value.endsWith(pattern) ? value.slice(0, value.length - pattern.length) : value;
    }
    default:
      return UNKNOWN;
  }
}

// A process substitution `<(cmd)` is a /dev/fd path whose content is cmd's output:
// the path carries an index into the outputs of one reading.
export class ProcessOutputs {
  private readonly outputs: Array<string | undefined> = [];

  /** The /dev/fd path standing for a substitution with this output. */
  path(output: string | undefined): string {
    this.outputs.push(output);
    return `/dev/fd/${UNKNOWN}proc${this.outputs.length - 1}${UNKNOWN}`;
  }

  /** For a path made by `path`: the output, or null when unknown; undefined for any other word. */
  outputOf(arg: string): string | null | undefined {
    const m = new RegExp(`^/dev/fd/${UNKNOWN}proc(\\d+)${UNKNOWN}$`).exec(arg);
    if (!m) return undefined;
    return this.outputs[Number(m[1])] ?? null;
  }
}

/** A word as the user should read it in a finding. */
export const shown = (s: string) => s.replace(new RegExp(`/dev/fd/${UNKNOWN}proc\\d+${UNKNOWN}`, 'g'), '<(…)').replaceAll(UNKNOWN, '…');
