// Destructive-intent scan over rendered prompts and build commands. A match
// blocks the run unless the recipe sets allow_destructive_intents: true, in
// which case it is only a warning. Build commands are read as shell (after
// variable expansion); prompts only where they hold commands: code spans,
// fenced blocks and `run:` lines (the local agent runs them), so prose such as
// "never DROP TABLE" is not an intent.
import type { Lang } from './command-normalise.ts';
import { destructiveCommand, destructiveSql, forkBomb, type Verdict } from './destructive-rules.ts';
import { readCode } from './interpreter-code.ts';
import { readShell } from './shell-commands.ts';
import { shown, UNKNOWN } from './shell-words.ts';
import { classifyTarget } from './target-paths.ts';

export interface DestructiveFinding {
  where: string;
  line: number;
  /** An intent, or a command whose effect the guard cannot tell before it runs; both are refused alike. */
  verdict: 'intent' | 'cannot tell';
  pattern: string;
  excerpt: string;
}

const excerptOf = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 120);
const maxNesting = 6;

/** A shell command line (a build command): every command it would run, after expansion with `vars`. */
export function scanShell(command: string, where: string, vars: Readonly<Record<string, string>> = {}, firstLine = 1): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  const lines = command.split('\n');
  const at = (line: number, v: Verdict) => {
    if (findings.some((f) => f.line === firstLine + line - 1 && f.pattern === v.pattern)) return;
    findings.push({ where, line: firstLine + line - 1, verdict: v.verdict, pattern: v.pattern, excerpt: excerptOf(lines[line - 1] ?? command) });
  };
  scanInto(command, vars, '.', 0, (line, v) => at(line, v), undefined);
  if (forkBomb.test(command)) at(lineOf(command, ':()'), { verdict: 'intent', pattern: 'fork bomb' });
  return findings;
}

type Report = (line: number, verdict: Verdict) => void;

/** Reads a shell script; `line` set: everything it finds is reported at that line of the outer snippet. */
function scanInto(script: string, vars: Readonly<Record<string, string>>, cwd: string, depth: number, report: Report, line: number | undefined): void {
  const reading = readShell(script, vars, cwd);
  const lineFor = (l: number) => line ?? l;
  // What only a program the guard does not know may run: refused as "cannot tell", naming the program.
  const maybe = (guess: string | undefined, v: Verdict): Verdict => (guess ? { verdict: 'cannot tell', pattern: `cannot tell: ${guess} may run a command that is a ${v.pattern.replace(/^cannot tell: /, '')}` } : v);
  for (const c of reading.commands) {
    const found = destructiveCommand(c.argv, c.cwd);
    if (found) report(lineFor(c.line), maybe(c.guess, found));
    // A code span of a prompt may be SQL itself: `DROP TABLE users;` reads as a command named DROP.
    if (/^(?:drop|truncate|delete)$/i.test(c.argv[0] ?? '')) {
      const sql = destructiveSql(c.argv.join(' '));
      if (sql) report(lineFor(c.line), maybe(c.guess, { verdict: 'intent', pattern: sql }));
    }
  }
  for (const w of reading.writes)
    if (/^\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk|disk)/.test(w.path)) report(lineFor(w.line), { verdict: 'intent', pattern: 'raw write to a disk device' });
  for (const u of reading.unresolved) report(lineFor(u.line), { verdict: 'cannot tell', pattern: `cannot tell: ${u.what}` });
  for (const c of reading.code) {
    const at = (v: Verdict) => report(lineFor(c.line), maybe(c.guess, v));
    scanCode(c.lang, c.text, c.cwd, vars, depth, at, lineFor(c.line), report);
    // SQL in code: a query the program runs, not prose.
    const sql = destructiveSql(c.text);
    if (sql) at({ verdict: 'intent', pattern: sql });
  }
  // SQL only in what a SQL client runs (psql -c "…", a heredoc into mysql): prose that mentions it is not an intent.
  for (const q of reading.sql) {
    const found = destructiveSql(q.text);
    if (found) report(lineFor(q.line), { verdict: 'intent', pattern: found });
  }
}

function scanCode(lang: Exclude<Lang, 'shell'>, code: string, cwd: string, vars: Readonly<Record<string, string>>, depth: number, at: (v: Verdict) => void, line: number, report: Report): void {
  const r = readCode(lang, code);
  for (const d of r.deletes) {
    const verdict = classifyTarget(d.target, cwd);
    if (verdict === 'vital') at({ verdict: 'intent', pattern: `recursive delete of ${shown(d.target)} (${lang} ${d.api})` });
    if (verdict === 'unknown') at({ verdict: 'cannot tell', pattern: `cannot tell: ${lang} ${d.api} of ${shown(d.target)}, a target only known when it runs or outside the workspace` });
  }
  for (const argv of r.argvs) {
    if (argv.length === 0 || argv[0]!.includes(UNKNOWN)) {
      at({ verdict: 'cannot tell', pattern: `cannot tell: ${lang} runs a command built at run time` });
      continue;
    }
    // Computed pieces become a substitution the reader cannot evaluate, so they stay unknown.
    const quoted = argv.map((a) => `'${a.replaceAll("'", `'\\''`).replaceAll(UNKNOWN, `'"$(false)"'`)}'`).join(' ');
    if (depth < maxNesting) scanInto(quoted, vars, cwd, depth + 1, report, line);
  }
  for (const s of r.shell) if (depth < maxNesting) scanInto(s, vars, cwd, depth + 1, report, line);
  for (const api of r.computedRuns) at({ verdict: 'cannot tell', pattern: `cannot tell: ${lang} ${api} of a command built at run time` });
}

function lineOf(text: string, piece: string): number {
  const i = text.indexOf(piece.split('\n')[0] ?? piece);
  return i < 0 ? 1 : text.slice(0, i).split('\n').length;
}

interface CodePiece {
  code: string;
  line: number;
  lang: string;
}

/** Fenced blocks (``` or ~~~), `run:` lines and inline code spans of a Markdown-ish prompt. */
export function codeIn(text: string): CodePiece[] {
  const pieces: CodePiece[] = [];
  const lines = text.split('\n');
  let fence: { marker: string; lang: string; start: number; body: string[] } | undefined;
  lines.forEach((line, i) => {
    const open = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (fence) {
      if (open && open[1]!.startsWith(fence.marker) && line.trim() === open[1]) {
        pieces.push({ code: fence.body.join('\n'), line: fence.start + 1, lang: fence.lang });
        fence = undefined;
      } else fence.body.push(line);
      return;
    }
    if (open) {
      fence = { marker: open[1]!, lang: open[2]!.toLowerCase(), start: i + 1, body: [] };
      return;
    }
    // A `run:` line is a command as a whole (backquotes in it are command substitutions).
    const run = /^run:\s*(.+)$/.exec(line.trim());
    if (run) {
      pieces.push({ code: run[1]!, line: i + 1, lang: '' });
      return;
    }
    for (const span of line.matchAll(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g)) pieces.push({ code: span[2]!.trim(), line: i + 1, lang: '' });
  });
  // An unclosed fence runs to the end, as Markdown reads it.
  if (fence) pieces.push({ code: fence.body.join('\n'), line: fence.start + 1, lang: fence.lang });
  return pieces;
}

const fenceLanguages: Record<string, Exclude<Lang, 'shell'>> = {
  python: 'python',
  py: 'python',
  python3: 'python',
  javascript: 'node',
  js: 'node',
  node: 'node',
  typescript: 'node',
  ts: 'node',
  perl: 'perl',
  ruby: 'ruby',
  rb: 'ruby',
  php: 'php',
};

/** A prompt: only its code spans and fenced blocks are read, as shell (SQL, python, JavaScript, perl, ruby and php blocks as those). */
export function scanText(text: string, where: string, vars: Readonly<Record<string, string>> = {}): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  for (const piece of codeIn(text)) {
    const lang = fenceLanguages[piece.lang];
    if (piece.lang === 'sql') {
      const found = destructiveSql(piece.code);
      if (found) findings.push({ where, line: piece.line, verdict: 'intent', pattern: found, excerpt: excerptOf(piece.code) });
    } else if (lang) {
      // A fenced block in a language the guard reads: its deletes and the commands it runs.
      const lines = piece.code.split('\n');
      const seen = new Set<string>();
      const report: Report = (line, v) => {
        if (seen.has(`${line}\0${v.pattern}`)) return;
        seen.add(`${line}\0${v.pattern}`);
        findings.push({ where, line, verdict: v.verdict, pattern: v.pattern, excerpt: excerptOf(lines.find((l) => /\S/.test(l)) ?? piece.code) });
      };
      scanCode(lang, piece.code, '.', vars, 0, (v) => report(piece.line, v), piece.line, report);
    } else findings.push(...scanShell(piece.code, where, vars, piece.line));
  }
  return findings;
}

export function describeFinding(f: DestructiveFinding): string {
  return `${f.where}:${f.line}: ${f.pattern}: ${f.excerpt}`;
}
