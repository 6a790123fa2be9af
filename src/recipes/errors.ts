// Errors of the recipe runner. Each carries its exit code from the one table
// (src/errors/exit-codes.ts), so the command layer turns any of them into a
// message and a status the same way.
import { ExitCode, type ExitCodeValue } from '../errors/exit-codes.ts';
import { ProblemsError } from '../errors/input-error.ts';

export { ExitCode, type ExitCodeValue };
export { RecipeInputError } from '../errors/input-error.ts';

/** A precondition of the run is not met (requires, destructive intents, canary, isolation): nothing ran. */
export class RunRefusedError extends ProblemsError {
  override name = 'RunRefusedError';
  readonly exitCode: ExitCodeValue = ExitCode.failed;
}
