// Data placed into text that a shell runs — a variable from outside in a
// shell step's script, a pipeline `pre` or a local agent's `run:` line, a
// step's output filled into one — the way the shell itself places a
// variable's value: quoted for where it stands (a word, double quotes, an
// unquoted heredoc, single quotes), so that it is one piece of text and never
// code. The text is read with the guard's shell parser; where a shell would
// not expand a variable (a comment, a quoted heredoc, backquotes, text that
// does not parse) the value is not placed and the caller gets the reason.
import { randomBytes } from 'node:crypto';
import { parser } from './preflight/shell-parser.ts';
import type { Node } from './preflight/shell-words.ts';

export interface Hole {
  value: string;
  /** What the value is, for an error: `variable TAG`, `${steps.fetch.output}`. */
  label: string;
}

type Context = { kind: 'word' | 'dq' | 'single' | 'ansi' } | { kind: 'heredoc'; delimiter: string } | { kind: 'refused'; why: string };

const quote = {
  word: (v: string) => `'${v.replaceAll("'", `'\\''`)}'`,
  dq: (v: string) => v.replace(/[\\$`"]/g, '\\$&'),
  heredoc: (v: string) => v.replace(/[\\$`]/g, '\\$&'),
  single: (v: string) => v.replaceAll("'", `'\\''`),
  ansi: (v: string) => v.replace(/[\\']/g, '\\$&'),
};

/**
 * Builds shell text with `hole(value, label)` standing for each piece of data, then places each value quoted
 * for its place. `singleLine`: a value with a line break is refused (a `run:` line is one line).
 */
export function placeInShell(build: (hole: (value: string, label: string) => string) => string, options: { singleLine?: boolean } = {}): { text: string } | { error: string } {
  const nonce = randomBytes(4).toString('hex');
  const holes: Hole[] = [];
  const template = build((value, label) => {
    holes.push({ value, label });
    return `\${__vigil_data_${nonce}_${holes.length - 1}}`;
  });
  if (holes.length === 0) return { text: template };
  if (options.singleLine) {
    const broken = holes.find((h) => /[\n\r]/.test(h.value));
    if (broken) return { error: `${broken.label} holds a line break, and a run: line is one line` };
  }
  const contexts = contextsOf(template, nonce);
  if ('error' in contexts) return { error: `${holes[0]!.label} cannot be placed: the text does not parse as shell (${contexts.error})` };
  const problems: string[] = [];
  const text = template.replace(new RegExp(`\\$\\{__vigil_data_${nonce}_(\\d+)\\}`, 'g'), (m, i: string) => {
    const hole = holes[Number(i)]!;
    const c = contexts.get(Number(i));
    if (!c) {
      problems.push(`${hole.label} stands where a shell does not expand a variable (a comment, a quoted heredoc or an escaped $)`);
      return m;
    }
    if (c.kind === 'refused') {
      problems.push(`${hole.label} ${c.why}`);
      return m;
    }
    if (c.kind === 'heredoc') {
      if (hole.value.split('\n').some((l) => l.replace(/^\t+/, '') === c.delimiter)) {
        problems.push(`${hole.label} holds the line "${c.delimiter}", which would end the heredoc it stands in`);
        return m;
      }
      return quote.heredoc(hole.value);
    }
    return quote[c.kind](hole.value);
  });
  return problems.length > 0 ? { error: problems.join('; ') } : { text };
}

function contextsOf(template: string, nonce: string): Map<number, Context> | { error: string } {
  const sx = parser();
  let file: Node;
  try {
    file = sx.NewParser().Parse(template, 'snippet');
  } catch (error) {
    return { error: String((error as { message?: string }).message ?? error) };
  }
  const name = new RegExp(`^__vigil_data_${nonce}_(\\d+)$`);
  const inText = new RegExp(`\\$\\{__vigil_data_${nonce}_(\\d+)\\}`, 'g');
  const offset = (n: Node) => Number(n.Pos().Offset());
  const heredocs = new Map<number, string>();
  const contexts = new Map<number, Context>();
  const stack: Node[] = [];
  const placeOf = (): Context => {
    for (let i = stack.length - 1; i >= 0; i -= 1) {
      const n = stack[i];
      const type = sx.NodeType(n);
      // Backquotes take backslashes off before the inner command is read: no quoting survives that.
      if (type === 'CmdSubst' && n.Backquotes) return { kind: 'refused', why: 'stands inside backquotes (`…`), where no quoting holds; write $(…) instead' };
      if (type === 'DblQuoted') return { kind: 'dq' };
      if (type === 'Word' && heredocs.has(offset(n))) return { kind: 'heredoc', delimiter: heredocs.get(offset(n))! };
    }
    return { kind: 'word' };
  };
  sx.Walk(file, (n: Node) => {
    if (n === null) {
      stack.pop();
      return true;
    }
    const type = sx.NodeType(n);
    if (type === 'Redirect' && n.Hdoc) heredocs.set(offset(n.Hdoc), (n.Word?.Parts ?? []).map((p: Node) => p.Value ?? '').join(''));
    if (type === 'ParamExp') {
      const m = name.exec(n.Param?.Value ?? '');
      if (m) contexts.set(Number(m[1]), placeOf());
    }
    if (type === 'SglQuoted') {
      const inBackquotes = placeOf();
      for (const m of String(n.Value).matchAll(inText)) contexts.set(Number(m[1]), inBackquotes.kind === 'refused' ? inBackquotes : { kind: n.Dollar ? 'ansi' : 'single' });
    }
    stack.push(n);
    return true;
  });
  return contexts;
}
