// The error of input a user gave (a recipe, vigil.yml, a flag) that was refused before anything ran. It lives
// with the exit-code table because reading vigil.yml (src/workspace) and the recipe runner both throw it; the
// command layer turns it into its message and exit 2, as it does any error carrying an exitCode.
import { ExitCode, type ExitCodeValue } from './exit-codes.ts';

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
