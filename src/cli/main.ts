// Entry point of the `vigil` command line: parses argv with the program of
// program.ts (each command group in its own file) and runs the command.
import { ExitCode } from '../errors/exit-codes.ts';
import { exitWith, fail, prepareHelp } from './command.ts';
import { vigilProgram } from './program.ts';
import { closestFlag, closestName, UsageError } from './options.ts';
import { forwardProductEvents } from '../cloud/event-forwarder.ts';

forwardProductEvents();

// A reader that goes away (`vigil sequence … | head`) is not a crash: output
// stops, the command goes on (a run keeps recording its steps). Commands that
// only print (watch) end themselves when their reader goes.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  // EIO: the terminal itself is gone (SIGHUP).
  if (error.code !== 'EPIPE' && error.code !== 'EIO' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
});

const cli = vigilProgram();

/**
 * `--port -1` reaches the flag's own check ("takes a whole number from 0 to
 * 65535"), not the parser's "Unknown option `-1`": a negative number after a
 * flag is that flag's value.
 */
function negativeValuesAttached(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (i >= 2 && /^--[a-z][\w-]*$/.test(arg) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** "; did you mean --var?" after cac's "Unknown option `--vars`", from the matched command's flags and the global ones. */
const kebab = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

function flagHint(message: string): string {
  const missing = /^option `(--[^` ]+)[^`]*` value is missing/.exec(message)?.[1];
  if (missing) {
    // What the flag takes, from its own help line.
    const option = [...(cli.matchedCommand?.options ?? []), ...cli.globalCommand.options].find((o) => o.names.map(kebab).includes(missing.slice(2)));
    return option ? `. ${option.rawName}: ${option.description}` : '';
  }
  const typed = /^Unknown option `(-[^`]+)`/.exec(message)?.[1];
  if (!typed) return '';
  const known = [...(cli.matchedCommand?.options ?? []), ...cli.globalCommand.options].flatMap((o) => o.names.map(kebab));
  const flag = closestFlag(typed, known.filter((n) => n.length > 1));
  return flag ? `; did you mean ${flag}?` : '';
}

/** "; did you mean sequence?" after an unknown command `sequnce`, from the commands and their aliases. */
function commandHint(typed: string): string | undefined {
  const name = closestName(typed, cli.commands.flatMap((c) => [c.name, ...c.aliasNames]).filter((n) => n !== ''));
  return name && `; did you mean ${name}?`;
}

const argv = negativeValuesAttached(process.argv);
// Some summaries load what their command needs: only when help is printed.
if (argv.length <= 2 || argv.includes('--help') || argv.includes('-h')) await prepareHelp();

try {
  cli.parse(argv, { run: false });
  // cac has printed the help or the version and forgotten the command.
  if (cli.options.help || cli.options.version) exitWith(ExitCode.ok);
  if (!cli.matchedCommand) {
    if (cli.args.length > 0) fail(new UsageError(`unknown command "${cli.args[0]}"${commandHint(String(cli.args[0])) ?? '.'} Run "vigil --help" for the list.`));
    cli.outputHelp();
  } else {
    await cli.runMatchedCommand();
  }
} catch (error) {
  if ((error as Error).name !== 'CACError') fail(error);
  // cac names an unknown `--catch-up` by its camel-cased key: name it as typed.
  const message = (error as Error).message.replace(/^(Unknown option `--)([^`]+)`/, (_m, head: string, name: string) => `${head}${kebab(name)}\``);
  fail(new UsageError(`${message}${flagHint(message)}`));
}
