// Destructive-intent scan over rendered prompts and build commands. A match
// blocks the run unless the recipe sets allow_destructive_intents: true, in
// which case it is only a warning. Build commands are read as shell (after
// variable expansion); prompts only where they hold commands: code spans and
// fenced blocks, so prose such as "never DROP TABLE" is not an intent.
import { destructiveCommand, destructiveSql, forkBomb } from './destructive-rules.ts';
import { readShell } from './shell-commands.ts';

export interface DestructiveFinding {
  where: string;
  line: number;
  pattern: string;
  excerpt: string;
}

const excerptOf = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 120);

/** A shell command line (a build command): every command it would run, after expansion with `vars`. */
export function scanShell(command: string, where: string, vars: Readonly<Record<string, string>> = {}, firstLine = 1): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  const lines = command.split('\n');
  const at = (line: number, pattern: string) =>
    findings.push({ where, line: firstLine + line - 1, pattern, excerpt: excerptOf(lines[line - 1] ?? command) });
  const reading = readShell(command, vars);
  for (const c of reading.commands) {
    const found = destructiveCommand(c.argv);
    if (found) at(c.line, found);
  }
  // SQL hides in arguments (psql -c "…"), heredocs, and in text that is not shell at all.
  for (const text of [command, ...reading.texts]) {
    const found = destructiveSql(text);
    if (found && !findings.some((f) => f.pattern === found)) at(lineOf(command, text), found);
  }
  if (forkBomb.test(command)) at(lineOf(command, ':()'), 'fork bomb');
  return findings;
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

/** Fenced blocks (``` or ~~~) and inline code spans of a Markdown-ish prompt. */
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
    for (const span of line.matchAll(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g)) pieces.push({ code: span[2]!.trim(), line: i + 1, lang: '' });
  });
  // An unclosed fence runs to the end, as Markdown reads it.
  if (fence) pieces.push({ code: fence.body.join('\n'), line: fence.start + 1, lang: fence.lang });
  return pieces;
}

/** A prompt: only its code spans and fenced blocks are read, as shell (SQL blocks as SQL). */
export function scanText(text: string, where: string, vars: Readonly<Record<string, string>> = {}): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  for (const piece of codeIn(text)) {
    if (piece.lang === 'sql') {
      const found = destructiveSql(piece.code);
      if (found) findings.push({ where, line: piece.line, pattern: found, excerpt: excerptOf(piece.code) });
    } else findings.push(...scanShell(piece.code, where, vars, piece.line));
  }
  return findings;
}

export function describeFinding(f: DestructiveFinding): string {
  return `${f.where}:${f.line}: ${f.pattern}: ${f.excerpt}`;
}
