// How every `vigil` command is declared and how it ends. One style of help: a
// summary (in `vigil --help` and atop the command's own help), what else the
// command does, its options, examples as a user types them (`.example('vigil
// …')`, shown after "$ "), and the exit codes. One way to fail: the message on stderr after "vigil:", and the code
// src/errors/exit-codes.ts gives the error.
import type { CAC, Command } from 'cac';
import { type ExitCodeValue, exitCodeOf, exitCodes } from '../errors/exit-codes.ts';

export interface CommandHelp {
  /** What the command does beyond its summary, shown under the summary in its own help. */
  readonly details?: string;
  /**
   * The summary, worked out only when help is printed, since it loads what the
   * command needs (`vigil sequence` lists the runnable recipe types from their
   * registry); `summary` stands in until then.
   */
  readonly summaryForHelp?: () => Promise<string>;
}

const indent = (text: string) => text.replace(/^/gm, '  ');

/** Summaries to work out before help is printed. */
const lateSummaries: Array<() => Promise<void>> = [];

export function defineCommand(cli: CAC, raw: string, summary: string, help: CommandHelp = {}): Command {
  const command = cli.command(raw, summary);
  const describe = (text: string) => {
    command.description = text;
    command.usage(`${raw}\n\n${indent(text)}${help.details ? `\n\n${indent(help.details)}` : ''}`);
  };
  describe(summary);
  const late = help.summaryForHelp;
  if (late) lateSummaries.push(async () => describe(await late()));
  return command;
}

/** Works out the summaries that wait for help to be asked for (main.ts calls it when it is). */
export async function prepareHelp(): Promise<void> {
  await Promise.all(lateSummaries.map((work) => work()));
}

/** The exit codes as the README and every help show them. */
export function exitCodeLines(): string {
  return exitCodes.map((e) => `  ${String(e.code).padEnd(3)}  ${e.meaning}`).join('\n');
}

/** cac's help callback: the same finish on every command's help and on the global one. */
export function helpStyle(sections: { title?: string; body: string }[]): { title?: string; body: string }[] {
  const finished = sections.map((section) => {
    // cac pads each option line with a space for a default it may print, and gives a --no-x flag the
    // default of x ("--no-publish  Do not publish (default: true)" reads as if not publishing were the default).
    const body = section.body.replace(/^(\s+--no-[^\n]*?) \(default: true\)$/gm, '$1').replace(/[ \t]+$/gm, '');
    return section.title === 'Examples' ? { ...section, body: body.replace(/^(?! {2}\$ )/gm, '  $ ') } : { ...section, body };
  });
  return [...finished, { title: 'Exit codes', body: exitCodeLines() }];
}

/** Ends the command on `error`: its message after `prefix` ("vigil" or "vigil <command>") and the code of the table. */
export function fail(error: unknown, prefix = 'vigil'): never {
  process.stderr.write(`${prefix}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(exitCodeOf(error));
}

/** Ends the command with a code of the table (a run's or a check's outcome rather than an error). */
export function exitWith(code: ExitCodeValue): never {
  process.exit(code);
}
