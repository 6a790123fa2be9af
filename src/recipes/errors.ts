// Errors of the recipe runner. Each carries the exit code the CLI uses, so one
// handler in the command layer turns any of them into a message and a status.

/** Exit codes of `vigil sequence` and friends. */
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  cancelled: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** A problem with user input (a recipe, vigil.yml, a flag): nothing ran. */
export class RecipeInputError extends Error {
  override name = 'RecipeInputError';
  readonly exitCode: ExitCodeValue = ExitCode.usage;
  constructor(
    message: string,
    readonly problems: string[] = [],
    options?: ErrorOptions,
  ) {
    super(problems.length > 0 ? `${message}\n${problems.map((p) => `  - ${p}`).join('\n')}` : message, options);
  }
}

/** A precondition of the run is not met (requires, destructive intents, canary, isolation): nothing ran. */
export class RunRefusedError extends Error {
  override name = 'RunRefusedError';
  readonly exitCode: ExitCodeValue = ExitCode.failed;
  constructor(
    message: string,
    readonly problems: string[] = [],
    options?: ErrorOptions,
  ) {
    super(problems.length > 0 ? `${message}\n${problems.map((p) => `  - ${p}`).join('\n')}` : message, options);
  }
}

export function exitCodeOf(error: unknown): ExitCodeValue {
  if (error instanceof RecipeInputError || error instanceof RunRefusedError) return error.exitCode;
  return ExitCode.failed;
}
