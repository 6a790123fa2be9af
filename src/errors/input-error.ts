// Errors that list the problems found before anything ran. RecipeInputError
// lives here, with the exit-code table, because reading vigil.yml
// (src/workspace) and the recipe runner both throw it; the command layer turns
// it into its message and exit 2, as it does any error carrying an exitCode.
import { ExitCode, type ExitCodeValue } from './exit-codes.ts';

/** An error whose message is followed by the problems it found, one per line. */
export class ProblemsError extends Error {
  constructor(
    message: string,
    readonly problems: string[] = [],
    options?: ErrorOptions,
  ) {
    super(problems.length > 0 ? `${message}\n${problems.map((p) => `  - ${p}`).join('\n')}` : message, options);
  }
}

/** A problem with user input (a recipe, vigil.yml, a flag): nothing ran. */
export class RecipeInputError extends ProblemsError {
  override name = 'RecipeInputError';
  readonly exitCode: ExitCodeValue = ExitCode.usage;
}
