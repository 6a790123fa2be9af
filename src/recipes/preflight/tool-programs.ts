// Programs that run commands of their own from a little language: awk
// (`system("…")`, `print | "cmd"`, `"cmd" | getline`) and GNU sed (the `e`
// command, the `e` flag of `s`). The commands written as string literals are
// returned as shell scripts to read; one built at run time (or the pattern
// space run as a command) is returned as a script only known when it runs.
// Not parsers of these languages: readers that say "only known when it runs"
// rather than guess.
import type { EmbeddedScript } from './command-types.ts';
import { readOptions } from './wrappers.ts';

const awkString = '"((?:[^"\\\\\\n]|\\\\.)*)"';
const unescapeAwk = (s: string) => s.replace(/\\(.)/g, (_m, c: string) => ({ n: '\n', t: '\t', r: '\r' })[c] ?? c);

/** The awk program of an awk command line (`-f file`: its content when known). */
export function awkScripts(args: readonly string[], contentOf: (arg: string) => string | null | undefined): EmbeddedScript[] {
  const { next, options } = readOptions(args, ['-F', '-v', '-f', '-e', '-i', '-l', '-E', '--field-separator', '--assign', '--file', '--source', '--include', '--load', '--exec']);
  const programs: Array<string | null> = [];
  for (const [name, value] of options) {
    if (name === '-e' || name === '--source') programs.push(value ?? '');
    if (name === '-f' || name === '--file' || name === '-E' || name === '--exec') {
      const content = value === undefined ? undefined : contentOf(value);
      if (content !== undefined) programs.push(content);
    }
  }
  if (!options.some(([n]) => ['-e', '--source', '-f', '--file', '-E', '--exec'].includes(n)) && args[next] !== undefined) programs.push(args[next]!);
  const scripts: EmbeddedScript[] = [];
  for (const program of programs) {
    if (program === null) {
      scripts.push({ lang: 'shell', text: undefined, via: 'an awk program written by this command' });
      continue;
    }
    for (const m of program.matchAll(/\bsystem\s*\(([^)]*)\)/g)) {
      const literal = new RegExp(`^\\s*${awkString}\\s*$`).exec(m[1]!);
      scripts.push(literal ? { lang: 'shell', text: unescapeAwk(literal[1]!), via: 'awk system()' } : { lang: 'shell', text: undefined, via: 'awk system() of a command built at run time' });
    }
    // `print … | "cmd"` and `"cmd" | getline`: the command is a shell line.
    for (const m of program.matchAll(new RegExp(`\\|&?\\s*${awkString}|${awkString}\\s*\\|&?\\s*getline`, 'g'))) {
      const command = unescapeAwk(m[1] ?? m[2]!);
      // Piped into a shell: it runs what awk prints, only known when it runs.
      if (m[1] !== undefined && /^\s*(?:\S*\/)?(?:ba|da|z|k)?sh\b/.test(command) && !/\s-c\b/.test(command)) scripts.push({ lang: 'shell', text: undefined, via: `awk print | "${command}"` });
      else scripts.push({ lang: 'shell', text: command, via: 'awk pipe' });
    }
    if (/\bprintf?\b[^;{}\n]*\|&?\s*(?!["\s])[A-Za-z_(]/.test(program) || /(?:[\w)\]])\s*\|&?\s*getline\b/.test(program.replace(new RegExp(`${awkString}\\s*\\|&?\\s*getline`, 'g'), '')))
      scripts.push({ lang: 'shell', text: undefined, via: 'awk pipe to a command built at run time' });
  }
  return scripts;
}

/** The commands a GNU sed script runs: `e command`, and `e` alone or the `e` flag of `s` (the pattern space, run). */
export function sedScripts(args: readonly string[], contentOf: (arg: string) => string | null | undefined): EmbeddedScript[] {
  const { next, options } = readOptions(args, ['-e', '-f', '-l', '--expression', '--file', '--line-length']);
  if (options.some(([n]) => n === '--sandbox')) return [];
  const programs: Array<string | null> = [];
  for (const [name, value] of options) {
    if (name === '-e' || name === '--expression') programs.push(value ?? '');
    if (name === '-f' || name === '--file') {
      const content = value === undefined ? undefined : contentOf(value);
      if (content !== undefined) programs.push(content);
    }
  }
  if (!options.some(([n]) => ['-e', '--expression', '-f', '--file'].includes(n)) && args[next] !== undefined) programs.push(args[next]!);
  const scripts: EmbeddedScript[] = [];
  for (const program of programs) {
    if (program === null) scripts.push({ lang: 'shell', text: undefined, via: 'a sed script written by this command' });
    else scripts.push(...sedCommands(program));
  }
  return scripts;
}

function sedCommands(program: string): EmbeddedScript[] {
  const scripts: EmbeddedScript[] = [];
  let i = 0;
  const toLineEnd = () => {
    const end = program.indexOf('\n', i);
    const text = program.slice(i, end < 0 ? undefined : end);
    i = end < 0 ? program.length : end + 1;
    return text;
  };
  const delimited = (delim: string) => {
    while (i < program.length && program[i] !== delim) i += program[i] === '\\' ? 2 : 1;
    i += 1;
  };
  while (i < program.length) {
    const c = program[i]!;
    if (/[\s;{}!]/.test(c)) {
      i += 1;
      continue;
    }
    // Addresses: numbers, $, first~step, /re/, \cREc, and the comma between two.
    if (/[\d$~,+]/.test(c)) {
      i += 1;
      continue;
    }
    if (c === '/' || c === '\\') {
      const delim = c === '\\' ? program[i + 1]! : '/';
      i += c === '\\' ? 2 : 1;
      delimited(delim);
      if (/[IM]/.test(program[i] ?? '')) i += 1;
      continue;
    }
    i += 1;
    if (c === '#' || c === ':' || 'aicrRwWv'.includes(c)) {
      toLineEnd();
      continue;
    }
    // Branches end their label at ; or a line end; q, Q, l, L take a number.
    if ('btT'.includes(c)) {
      while (i < program.length && !/[;\n]/.test(program[i]!)) i += 1;
      continue;
    }
    if (c === 'e') {
      const command = toLineEnd().trim();
      scripts.push(command ? { lang: 'shell', text: command, via: 'sed e' } : { lang: 'shell', text: undefined, via: 'sed e, which runs the pattern space' });
      continue;
    }
    if (c === 's' || c === 'y') {
      const delim = program[i]!;
      i += 1;
      delimited(delim);
      delimited(delim);
      if (c === 's') {
        const flags = /^[0-9gpIiMme]*/.exec(program.slice(i))![0];
        i += flags.length;
        if (flags.includes('e')) scripts.push({ lang: 'shell', text: undefined, via: 'sed s///e, which runs the result' });
        if (program[i] === 'w') toLineEnd();
      }
    }
  }
  return scripts;
}
