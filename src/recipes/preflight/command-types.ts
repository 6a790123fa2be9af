// The shapes the guard's command readers share: a command as judged, the
// scripts it hands on, and what its standard input is.

export type Lang = 'shell' | 'python' | 'node' | 'perl' | 'ruby' | 'php';

export interface EmbeddedScript {
  lang: Lang;
  /** undefined: the text is only known when the command runs. */
  text: string | undefined;
  /** How it is handed over, for the finding: `sh -c`, `eval`, `python -c`, `stdin of sh`. */
  via: string;
}

export interface NormalCommand {
  argv: string[];
  scripts: EmbeddedScript[];
  /** Commands it runs itself (`find -exec …`), judged as commands of their own. */
  nested: string[][];
  /** The program reads its standard input as a script in this language. */
  stdinScript?: Lang;
  /** The folder it runs in, relative to the folder of the line (`env -C dir`, `sudo -D dir`). */
  cwd?: string;
}

/** Standard input of a command: known text, nothing, or produced by something only known when run. */
export type Stdin = { kind: 'none' } | { kind: 'text'; text: string } | { kind: 'unknown'; from: string };
