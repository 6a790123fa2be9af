// Files a shell line writes before it runs them (`echo '…' > x.sh && bash
// x.sh`, `cat > x.sh <<EOF`, `… | tee x.sh`, `curl -o x.sh …`): what each
// holds by the time a later command of the line runs it — the text, when the
// guard knows what was written, or null when only running could tell.
import type { Stdin } from './command-normalise.ts';
import { joinPath } from './paths.ts';
import { UNKNOWN } from './shell-words.ts';

export class WrittenFiles {
  private readonly files = new Map<string, string | null>();

  /** A write to `path` (already joined to the folder); `text` undefined: only known when it runs. */
  write(path: string, text: string | undefined, append: boolean): void {
    if (path.startsWith('/dev/')) return;
    const before = this.files.get(path);
    const known = text === undefined || text.includes(UNKNOWN) ? null : text;
    this.files.set(path, append && before !== undefined ? (before === null || known === null ? null : before + known) : known);
  }

  /** What a path the line wrote holds (null: only known when it runs); undefined for a path it did not write. */
  contentOf(path: string): string | null | undefined {
    return this.files.get(path);
  }

  /** Files a command writes by name: tee (its input), curl -o and wget -O (only known when they run). */
  writtenBy(argv: readonly string[], stdin: Stdin, cwd: string): void {
    const [cmd, ...args] = argv;
    if (cmd === 'tee') {
      const text = stdin.kind === 'text' ? stdin.text : stdin.kind === 'none' ? '' : undefined;
      for (const a of args.filter((x) => !x.startsWith('-'))) this.write(joinPath(cwd, a), text, args.includes('-a') || args.includes('--append'));
    }
    if (cmd !== 'curl' && cmd !== 'wget') return;
    // curl -o FILE (or a bundle ending in o: -fsSLo FILE), wget -O FILE.
    const flag = cmd === 'curl' ? 'o' : 'O';
    args.forEach((a, i) => {
      const next = args[i + 1];
      if ((new RegExp(`^-[A-Za-z]*${flag}$`).test(a) || a === '--output' || a === '--output-document') && next) this.write(joinPath(cwd, next), undefined, false);
      else if (/^--output(?:-document)?=/.test(a)) this.write(joinPath(cwd, a.slice(a.indexOf('=') + 1)), undefined, false);
      else if (new RegExp(`^-${flag}.`).test(a)) this.write(joinPath(cwd, a.slice(2)), undefined, false);
    });
  }
}
