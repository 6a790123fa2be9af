// One-liners given to python, node, perl, ruby or php (`python -c`, `node -e`,
// a heredoc into `python -`): the recursive deletes they call
// (`shutil.rmtree`, `fs.rmSync(…, {recursive})`, `FileUtils.rm_rf`, `rmtree`)
// with the path each is given, when it can be read from the code (a string,
// the home folder in each language's spelling, joins of those), and the
// commands they hand to a shell (`os.system`, `subprocess.run`, `execSync`,
// `system`, backticks). Not a parser of these languages: a pattern reader
// that says "computed" rather than guess.
import type { Lang } from './command-normalise.ts';
import { HOME, UNKNOWN } from './shell-words.ts';

export interface CodeReading {
  /** Shell command lines the code runs. */
  shell: string[];
  /** Commands the code runs as argument lists (`subprocess.run(["rm", "-rf", "/"])`). */
  argvs: string[][];
  /** Recursive deletes: the API and its target (UNKNOWN where computed). */
  deletes: Array<{ api: string; target: string }>;
  /** Runs of a command built at run time (`os.system(cmd)`). */
  computedRuns: string[];
}

type Lang2 = Exclude<Lang, 'shell'>;

const deleteApis: Record<Lang2, RegExp> = {
  python: /\b(?:shutil\.)?rmtree\s*\(/g,
  node: /\b(?:(?:fs|fse|fsExtra|fsp|promises)\.)?(?:rmSync|rm|rmdirSync|rmdir|rimraf(?:Sync)?|rimraf\.sync|removeSync|remove|emptyDirSync|emptyDir)\s*\(/g,
  perl: /\b(?:File::Path::)?(?:rmtree|remove_tree)\s*\(?/g,
  ruby: /\b(?:FileUtils\.)?(?:rm_rf|rm_r|remove_dir|remove_entry_secure|remove_entry|rmtree)\b\s*\(?/g,
  php: /$^/g,
};

// Calls whose first argument is a command line (or a list: the argv).
const runApis: Record<Lang2, RegExp> = {
  python: /\b(?:os\.(?:system|popen|exec[lv]p?e?)|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|commands\.getoutput|pty\.spawn)\s*\(/g,
  node: /\b(?:(?:child_process|cp|childProcess)\.)?(?:execSync|exec|execFileSync|execFile|spawnSync|spawn)\s*\(|\bBun\.spawn(?:Sync)?\s*\(/g,
  perl: /\b(?:system|exec|qx)\s*[({]?/g,
  ruby: /(?:\b(?:system|exec|spawn|IO\.popen|Open3\.\w+)|%x)\s*\(?/g,
  php: /\b(?:exec|system|shell_exec|passthru|popen|proc_open)\s*\(/g,
};

// Only these are surely running a command when their argument is computed (`re.exec(s)` is not).
const surelyRuns = /os\.system|os\.popen|subprocess\.|execSync|child_process\.|spawnSync|shell_exec|passthru|IO\.popen/;

const homeSpellings =
  /^(?:os\.path\.expanduser\(\s*(['"])~\/?\1\s*\)|(?:pathlib\.)?Path\.home\(\)|os\.environ(?:\.get\(|\[)\s*(['"])HOME\2\s*[\])]|os\.getenv\(\s*(['"])HOME\3\s*\)|(?:require\(\s*['"](?:node:)?os['"]\s*\)|os)\.homedir\(\)|homedir\(\)|process\.env(?:\.HOME|\[\s*['"]HOME['"]\s*\])|Dir\.home|ENV(?:\[\s*['"]HOME['"]\s*\]|\.fetch\(\s*['"]HOME['"]\s*\))|\$ENV\{\s*['"]?HOME['"]?\s*\}|Deno\.env\.get\(\s*['"]HOME['"]\s*\))$/;

/** The text inside the brackets that open at `open`, and where it ends. */
function bracketed(code: string, open: number): { inner: string; end: number } {
  const pairs: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
  const stack: string[] = [];
  let quote: string | undefined;
  for (let i = open; i < code.length; i += 1) {
    const c = code[i]!;
    if (quote) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if (pairs[c]) stack.push(pairs[c]!);
    else if (c === stack[stack.length - 1] && stack.pop() && stack.length === 0) return { inner: code.slice(open + 1, i), end: i };
  }
  return { inner: code.slice(open + 1), end: code.length };
}

/** Splits at top-level occurrences of `sep` (outside brackets and quotes). */
function splitTop(text: string, sep: RegExp): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let from = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if ('([{'.includes(c)) depth += 1;
    else if (')]}'.includes(c)) depth -= 1;
    else if (depth === 0) {
      const m = sep.exec(text.slice(i));
      if (m && m.index === 0) {
        out.push(text.slice(from, i));
        from = i + m[0].length;
        i = from - 1;
      }
    }
  }
  out.push(text.slice(from));
  return out.map((s) => s.trim());
}

const stringLiteral = /^(?:[rbuf]{0,2})(['"`])([\s\S]*)\1$/;

/** The value of a path expression, with UNKNOWN where it is computed. */
export function pathValue(expr: string): string {
  const e = expr.trim().replace(/;$/, '');
  if (homeSpellings.test(e)) return HOME;
  // One-liners run in the command's folder: their own folder is that folder.
  if (/^(?:__dirname|process\.cwd\(\)|os\.getcwd\(\)|Dir\.pwd|Deno\.cwd\(\)|getcwd\(\)|['"]\.['"])$/.test(e)) return '.';
  const lit = stringLiteral.exec(e);
  if (lit && !/^f|`/.test(e) && !(lit[1] === '"' && /[$#]\{|\$\w/.test(lit[2]!))) return lit[2]!;
  if (lit) {
    // Interpolated strings: `${…}`, f'{…}', "#{…}", "$ENV{HOME}".
    const home = '\u0001';
    return lit[2]!
      .replace(/\$ENV\{\s*['"]?HOME['"]?\s*\}/g, home)
      .replace(/[$#]?\{([^}]*)\}/g, (_, inner: string) => pathValue(inner).replace(HOME, home))
      .replace(/\$\w+/g, UNKNOWN)
      .replaceAll(home, HOME);
  }
  const call = /^([\w.]+)\s*\(([\s\S]*)\)$/.exec(e);
  if (call && bracketed(e, e.indexOf('(')).end === e.length - 1) {
    const [, fn, inner] = call;
    const args = splitTop(inner!, /,/).filter((a) => a !== '' && !/^\{|^\w+\s*=/.test(a));
    if (/^(?:os\.path\.expanduser|File\.expand_path)$/.test(fn!)) return pathValue(args[0] ?? '').replace(/^~(?=\/|$)/, HOME);
    if (/^(?:os\.path\.(?:abspath|realpath|normpath)|path\.(?:normalize|resolve)|(?:pathlib\.)?Path|PurePath|str|String|Pathname\.new|File\.realpath)$/.test(fn!) && args.length === 1)
      return pathValue(args[0]!);
    if (/^(?:os\.path\.join|path\.(?:join|resolve)|File\.join|(?:pathlib\.)?Path)$/.test(fn!) && args.length > 1) return args.map(pathValue).join('/');
  }
  const slash = splitTop(e, /\s\/\s/);
  if (slash.length > 1) return slash.map(pathValue).join('/');
  const plus = splitTop(e, /\+|\.(?=\s*['"])/);
  if (plus.length > 1) return plus.map(pathValue).join('');
  return UNKNOWN;
}

function firstArgument(code: string, at: number): { text: string; whole: string } {
  const rest = code.slice(at);
  const open = /^\s*[({]/.exec(rest);
  const whole = open ? bracketed(code, at + open[0].length - 1).inner : (/^[^;\n]*/.exec(rest)?.[0] ?? '');
  return { text: splitTop(whole, /,/)[0] ?? '', whole };
}

/** Where the arguments of a matched call start: at its bracket when the match took it. */
const argumentsAt = (m: RegExpMatchArray) => m.index! + m[0].length - (/[({]$/.test(m[0]) ? 1 : 0);

export function readCode(lang: Lang2, code: string): CodeReading {
  const reading: CodeReading = { shell: [], argvs: [], deletes: [], computedRuns: [] };
  for (const m of code.matchAll(deleteApis[lang])) {
    const { text, whole } = firstArgument(code, argumentsAt(m));
    // fs.rm and fs.rmdir delete a tree only with { recursive: true }.
    if (lang === 'node' && /\b(?:rm|rmSync|rmdir|rmdirSync)\s*\($/.test(m[0]) && !/recursive\s*:\s*true/.test(whole)) continue;
    reading.deletes.push({ api: m[0].replace(/\s*[({]?$/, ''), target: pathValue(text) });
  }
  for (const m of code.matchAll(runApis[lang])) {
    const { text, whole } = firstArgument(code, argumentsAt(m));
    const api = m[0].replace(/\s*[({]?$/, '');
    const t = text.trim();
    if (t.startsWith('[')) {
      reading.argvs.push(splitTop(t.slice(1, -1), /,/).filter(Boolean).map(pathValue));
      continue;
    }
    const second = splitTop(whole, /,/)[1]?.trim();
    const value = pathValue(t);
    if (second?.startsWith('[') && /execFile|spawn/.test(api)) reading.argvs.push([value, ...splitTop(second.slice(1, -1), /,/).filter(Boolean).map(pathValue)]);
    else if (!value.includes(UNKNOWN)) reading.shell.push(value);
    else if (surelyRuns.test(api)) reading.computedRuns.push(api);
  }
  // Backticks run a shell in perl, ruby and php.
  if (lang === 'perl' || lang === 'ruby' || lang === 'php') for (const m of code.matchAll(/`([^`]*)`/g)) reading.shell.push(m[1]!);
  return reading;
}
