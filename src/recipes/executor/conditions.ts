// A step's `if:`: a small expression language read by a hand-written parser
// (never eval). Values are strings, numbers, booleans and null; see
// docs/recipes.md, "Conditions and retries", for the grammar.
//
//   expr    := or ; or := and ('||' and)* ; and := unary ('&&' unary)*
//   unary   := '!' unary | compare ; compare := primary (('=='|'!='|'<'|'<='|'>'|'>=') primary)?
//   primary := 'string' | "string" | number | true | false | null | '(' expr ')'
//            | always() | success() | failure() | contains(a, b) | startsWith(a, b)
//            | vars.NAME | steps.<label>.(status|output|json.<field>…)
//
// `${{ … }}` around the whole expression (as GitHub Actions writes it) is accepted.

export type Value = string | number | boolean | null;

type Node =
  | { k: 'lit'; v: Value }
  | { k: 'ref'; path: string[] }
  | { k: 'call'; name: string; args: Node[] }
  | { k: 'not'; e: Node }
  | { k: 'bin'; op: string; l: Node; r: Node };

export const STATUS_FUNCTIONS = ['always', 'success', 'failure'] as const;
const FUNCTIONS: Record<string, number> = { always: 0, success: 0, failure: 0, contains: 2, startsWith: 2 };

export interface Condition {
  source: string;
  /** True when it calls always() or failure(): then it is asked even when a step it waits for did not succeed. */
  checksStatus: boolean;
  /** Step labels it reads (steps.<label>…). */
  steps: string[];
  root: Node;
}

export interface ConditionContext {
  vars: Record<string, string>;
  /** The step record of a label: status, bounded output, parsed JSON output. */
  step(label: string): { status: string; output: string; json: unknown } | undefined;
  /** Whether a step of the run has failed, been killed or conflicted so far (continue_on_error steps aside). */
  anyFailed: boolean;
}

const TOKEN = /\s*(?:(\d+(?:\.\d+)?)|('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(&&|\|\||==|!=|<=|>=|[<>!(),.])|([A-Za-z_][A-Za-z0-9_-]*))/y;

function tokenize(src: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  let pos = 0;
  while (pos < src.length) {
    if (/^\s*$/.test(src.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(src);
    if (!m) throw new Error(`unexpected character at ${pos + 1}: "${src.slice(pos, pos + 10)}"`);
    out.push((m[1] ?? m[2] ?? m[3] ?? m[4])!);
    pos = TOKEN.lastIndex;
  }
  return out;
}

export function parseCondition(source: string): Condition {
  const stripped = source.trim().replace(/^\$\{\{([\s\S]*)\}\}$/, '$1');
  const toks = tokenize(stripped);
  let i = 0;
  const peek = (): string | undefined => toks[i];
  const take = (want?: string): string => {
    const t = toks[i];
    if (t === undefined) throw new Error(want ? `expected "${want}" at the end` : 'unexpected end');
    if (want !== undefined && t !== want) throw new Error(`expected "${want}", found "${t}"`);
    i += 1;
    return t;
  };
  const steps = new Set<string>();
  let checksStatus = false;
  const primary = (): Node => {
    const t = take();
    if (t === '(') {
      const e = or();
      take(')');
      return e;
    }
    if (/^\d/.test(t)) return { k: 'lit', v: Number(t) };
    if (t[0] === "'" || t[0] === '"') return { k: 'lit', v: t.slice(1, -1).replace(/\\(.)/g, '$1') };
    if (t === 'true' || t === 'false') return { k: 'lit', v: t === 'true' };
    if (t === 'null') return { k: 'lit', v: null };
    if (peek() === '(') {
      if (!(t in FUNCTIONS)) throw new Error(`unknown function ${t}(); known: ${Object.keys(FUNCTIONS).join(', ')}`);
      take('(');
      const args: Node[] = [];
      while (peek() !== ')') {
        args.push(or());
        if (peek() === ',') take(',');
        else break;
      }
      take(')');
      if (args.length !== FUNCTIONS[t]) throw new Error(`${t}() takes ${FUNCTIONS[t]} argument(s), got ${args.length}`);
      if (t !== 'success' && (STATUS_FUNCTIONS as readonly string[]).includes(t)) checksStatus = true;
      return { k: 'call', name: t, args };
    }
    if (t !== 'vars' && t !== 'steps' && t !== 'env') throw new Error(`unknown name "${t}": use vars.NAME, steps.<label>.status|output|json.<field>, or a quoted string`);
    const path = [t === 'env' ? 'vars' : t];
    while (peek() === '.') {
      take('.');
      const part = take();
      if (!/^[A-Za-z0-9_][A-Za-z0-9_-]*$/.test(part)) throw new Error(`expected a name after ".", found "${part}"`);
      path.push(part);
    }
    if (path[0] === 'vars' && path.length !== 2) throw new Error(`vars.NAME names one variable, found "${path.join('.')}"`);
    if (path[0] === 'steps') {
      if (path.length < 3) throw new Error(`"${path.join('.')}": use steps.<label>.status, .output or .json.<field>`);
      if (!['status', 'output', 'json', 'outcome'].includes(path[2]!) || (path[2] !== 'json' && path.length > 3))
        throw new Error(`"${path.join('.')}": a step offers status, output and json.<field>`);
      steps.add(path[1]!);
    }
    return { k: 'ref', path };
  };
  const compare = (): Node => {
    const l = primary();
    const op = peek();
    if (op && ['==', '!=', '<', '<=', '>', '>='].includes(op)) {
      take();
      return { k: 'bin', op, l, r: primary() };
    }
    return l;
  };
  const unary = (): Node => {
    if (peek() === '!') {
      take();
      return { k: 'not', e: unary() };
    }
    return compare();
  };
  const and = (): Node => {
    let l = unary();
    while (peek() === '&&') {
      take();
      l = { k: 'bin', op: '&&', l, r: unary() };
    }
    return l;
  };
  const or = (): Node => {
    let l = and();
    while (peek() === '||') {
      take();
      l = { k: 'bin', op: '||', l, r: and() };
    }
    return l;
  };
  if (toks.length === 0) throw new Error('empty condition');
  const root = or();
  if (i < toks.length) throw new Error(`unexpected "${toks[i]}"`);
  return { source, checksStatus, steps: [...steps], root };
}

/** Empty strings, "false", "0", 0, false and null are false; anything else is true. */
export function truthy(v: Value): boolean {
  return !(v === null || v === false || v === 0 || v === '' || v === 'false' || v === '0');
}

function evaluate(n: Node, ctx: ConditionContext): Value {
  switch (n.k) {
    case 'lit':
      return n.v;
    case 'not':
      return !truthy(evaluate(n.e, ctx));
    case 'ref': {
      if (n.path[0] === 'vars') return ctx.vars[n.path[1]!] ?? null;
      const s = ctx.step(n.path[1]!);
      if (!s) return null;
      if (n.path[2] === 'status' || n.path[2] === 'outcome') return s.status;
      if (n.path[2] === 'output') return s.output;
      let v: unknown = s.json;
      for (const key of n.path.slice(3)) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
      if (v === undefined) return null;
      return typeof v === 'object' && v !== null ? JSON.stringify(v) : (v as Value);
    }
    case 'call': {
      if (n.name === 'always') return true;
      if (n.name === 'success') return !ctx.anyFailed;
      if (n.name === 'failure') return ctx.anyFailed;
      const [a, b] = n.args.map((x) => evaluate(x, ctx));
      const sa = String(a ?? '');
      const sb = String(b ?? '');
      return n.name === 'contains' ? sa.includes(sb) : sa.startsWith(sb);
    }
    case 'bin': {
      if (n.op === '&&') return truthy(evaluate(n.l, ctx)) && truthy(evaluate(n.r, ctx));
      if (n.op === '||') return truthy(evaluate(n.l, ctx)) || truthy(evaluate(n.r, ctx));
      const l = evaluate(n.l, ctx);
      const r = evaluate(n.r, ctx);
      if (n.op === '==') return looseEqual(l, r);
      if (n.op === '!=') return !looseEqual(l, r);
      const ln = Number(l);
      const rn = Number(r);
      if (Number.isNaN(ln) || Number.isNaN(rn) || l === null || r === null) return false;
      return n.op === '<' ? ln < rn : n.op === '<=' ? ln <= rn : n.op === '>' ? ln > rn : ln >= rn;
    }
  }
}

/** Numbers compare as numbers ("3" == 3), everything else as strings; null equals only null and "". */
function looseEqual(a: Value, b: Value): boolean {
  if (a === null || b === null) return (a ?? '') === (b ?? '');
  if (typeof a === 'number' || typeof b === 'number') return Number(a) === Number(b);
  return String(a) === String(b);
}

export function conditionHolds(c: Condition, ctx: ConditionContext): boolean {
  return truthy(evaluate(c.root, ctx));
}
