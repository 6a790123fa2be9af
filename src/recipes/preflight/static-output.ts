// What a command prints when that is known without running it: the guard
// uses it for command substitutions (`rm -rf "$(printf %s ~)"`) and for text
// piped into a shell (`echo … | base64 -d | sh`).
import type { Stdin } from './command-normalise.ts';
import { joinPath } from './paths.ts';
import { UNKNOWN } from './shell-words.ts';

/** What a command prints when that is known without running it (echo, printf, cat of its input, base64 -d …). */
export function staticOutput(argv: readonly string[], stdin: Stdin, cwd: string): string | undefined {
  const [cmd, ...args] = argv;
  const known = stdin.kind === 'text' ? stdin.text : stdin.kind === 'none' ? '' : undefined;
  switch (cmd) {
    case 'echo': {
      let i = 0;
      while (/^-[neE]+$/.test(args[i] ?? '')) i += 1;
      return `${args.slice(i).join(' ')}${args.slice(0, i).some((a) => a.includes('n')) ? '' : '\n'}`;
    }
    case 'printf':
      return printf(args);
    case 'cat':
      return args.length === 0 || (args.length === 1 && args[0] === '-') ? known : undefined;
    case 'base64':
      if (!args.some((a) => /^-[a-zA-Z]*d|^--decode$/.test(a)) || args.some((a) => !a.startsWith('-')) || known === undefined || known.includes(UNKNOWN)) return undefined;
      return Buffer.from(known.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'pwd':
      return `${cwd}\n`;
    case 'realpath':
    case 'readlink':
      return args.filter((a) => !a.startsWith('-')).map((a) => `${a}\n`).join('') || undefined;
    case 'dirname':
      // The folder above, as text: dirname of the workspace (`.`) is `..`, outside it.
      return args[0] === undefined ? undefined : `${joinPath('.', `${args[0]}/..`)}\n`;
    case 'mktemp':
      return args.some((a) => a === '-u' || a === '--dry-run') ? undefined : `/tmp/tmp.${UNKNOWN}\n`;
    case 'true':
    case 'cd':
    case ':':
      return '';
    default:
      return undefined;
  }
}

function printf(args: string[]): string | undefined {
  const [format, ...values] = args;
  if (format === undefined || format.startsWith('-')) return undefined;
  let out = '';
  let k = 0;
  do {
    let unsupported = false;
    out += format.replace(/%([sbdq%])|\\n|\\t|\\\\/g, (m, spec: string | undefined) => {
      if (m === '\\n') return '\n';
      if (m === '\\t') return '\t';
      if (m === '\\\\') return '\\';
      if (spec === '%') return '%';
      return values[k++] ?? '';
    });
    if (/%[^sbdq%]/.test(format)) unsupported = true;
    if (unsupported) return undefined;
  } while (k < values.length && /%[sbdq]/.test(format));
  return out;
}
