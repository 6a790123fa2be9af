// The exit codes of every `vigil` command, and the one mapping from an error
// to its code. The README's table and each command's --help are rendered from
// `exitCodes`; a command never picks a number of its own. An error says what
// kind of failure it is either with an `exitCode` of this table (UsageError,
// RecipeInputError, UnreachableError, …) or, as a VigilError of the SDK, with
// its `code`.

export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  unreachable: 3,
  timedOut: 124,
  cancelled: 130,
  terminated: 143,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** What each code means, in order: the README's table and the "Exit codes" of every command's help. */
export const exitCodes: readonly { readonly code: ExitCodeValue; readonly meaning: string }[] = [
  { code: ExitCode.ok, meaning: 'done' },
  { code: ExitCode.failed, meaning: 'a run, check, firing or delivery failed, or the server refused the request' },
  { code: ExitCode.usage, meaning: 'refused input (an unknown command or flag, a bad value, an invalid recipe or vigil.yml): nothing ran' },
  { code: ExitCode.unreachable, meaning: 'the server (or its cloud API) could not be reached' },
  { code: ExitCode.timedOut, meaning: 'timed out (script --timeout, temporal fire after 600 s)' },
  { code: ExitCode.cancelled, meaning: 'interrupted (Ctrl-C, SIGINT)' },
  { code: ExitCode.terminated, meaning: 'stopped by SIGTERM or SIGHUP' },
];

/** The signals a command stops on, cancelling what it started. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** The code of a command stopped by `signal` (130 for SIGINT, 143 for SIGTERM and SIGHUP). */
export function signalExit(signal: string): ExitCodeValue {
  return signal === 'SIGTERM' || signal === 'SIGHUP' ? ExitCode.terminated : ExitCode.cancelled;
}

/**
 * Aborts `controller` with the signal's name on SIGINT, SIGTERM or SIGHUP, so that a command stops what it
 * started before it exits with signalExit; a second signal exits at once. Returns what stops listening.
 */
export function abortOnStopSignals(controller: AbortController): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(signalExit(signal));
    controller.abort(signal);
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  return () => {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
  };
}

const known = new Set<number>(exitCodes.map((e) => e.code));

/** VigilError codes (src/errors/vigil-error.ts) that are not "failed". */
const byVigilCode: Readonly<Record<string, ExitCodeValue>> = {
  INVALID_ARGUMENT: ExitCode.usage,
  TIMEOUT: ExitCode.timedOut,
};

/** The exit code for `error`: its own `exitCode` when it has one of the table, else by its SDK code, else 1. */
export function exitCodeOf(error: unknown): ExitCodeValue {
  if (typeof error !== 'object' || error === null) return ExitCode.failed;
  const { exitCode, code, name, details } = error as { exitCode?: unknown; code?: unknown; name?: unknown; details?: { server_code?: unknown } };
  if (typeof exitCode === 'number' && known.has(exitCode)) return exitCode as ExitCodeValue;
  // cac's own refusals: an unknown flag, a missing argument.
  if (name === 'CACError') return ExitCode.usage;
  if (name === 'VigilError' && typeof code === 'string') {
    // The cloud API did not answer (not "is not configured", which is input).
    if (code === 'CLOUD_UNAVAILABLE' && details?.server_code === 'UNREACHABLE') return ExitCode.unreachable;
    return byVigilCode[code] ?? ExitCode.failed;
  }
  return ExitCode.failed;
}
