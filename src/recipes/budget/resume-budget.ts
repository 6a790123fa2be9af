// A budget is run-wide: `--resume <run>` goes on with what that run left of
// it. When nothing is left the resume is refused before anything starts
// (exit 2), saying what was spent and the cap.
import { RecipeInputError } from '../errors.ts';
import type { RunJson } from '../records/run-record.ts';
import type { Budget } from '../types.ts';

/** Refuses to resume `previous` when it already spent its recipe's tokens or usd budget. */
export function refuseSpentResume(previous: RunJson, budget: Budget | undefined, recipeFile: string): void {
  const used = previous.usage;
  if (!budget || !used) return;
  const tokens = used.input_tokens + used.output_tokens;
  const spent =
    budget.tokens !== undefined && tokens >= budget.tokens
      ? { what: `${tokens} tokens`, cap: `${budget.tokens} tokens`, field: 'budget.tokens' }
      : budget.usd !== undefined && used.usd >= budget.usd
        ? { what: `$${used.usd}`, cap: `$${budget.usd}`, field: 'budget.usd' }
        : null;
  if (!spent) return;
  throw new RecipeInputError(
    `--resume ${previous.id}: nothing is left of the budget: run ${previous.id} of "${previous.recipe}" spent ${spent.what} of its ${spent.cap} (${spent.field} in ${recipeFile}); nothing was started`,
  );
}
