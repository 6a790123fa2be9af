// The `temporal` recipe type: a target run on a cron schedule by `vigil
// daemon` (recipes-and-sdk.md §3). The schema checks shapes; the schedule and
// timezone are checked by croner itself, so what is accepted is what runs.
import { createRequire } from 'node:module';
import { Cron } from 'croner';
import { lazyValidator } from '../../../json/compile-schema.ts';
import { describeSchemaErrors } from '../../../json/schema-errors.ts';
import type { TemporalRecipe } from '../../types.ts';

const require = createRequire(import.meta.url);
export const temporalSchemaPath: string = require.resolve('./schema.json');
const validator = lazyValidator<TemporalRecipe>(temporalSchemaPath);

export function checkTemporalRecipe(doc: unknown): string[] {
  const validate = validator();
  if (!validate(doc)) return describeSchemaErrors(validate.errors, doc);
  const recipe = doc as TemporalRecipe;
  const problems: string[] = [];
  if (recipe.timezone !== undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: recipe.timezone });
    } catch {
      problems.push(`timezone: "${recipe.timezone}" is not an IANA time zone (e.g. Europe/Paris, UTC)`);
    }
  }
  try {
    new Cron(recipe.schedule, { paused: true, ...(problems.length === 0 && recipe.timezone ? { timezone: recipe.timezone } : {}) });
  } catch (error) {
    problems.push(`schedule: "${recipe.schedule}" is not a cron expression (5 or 6 fields, or @hourly, @daily, …): ${(error as Error).message}`);
  }
  return problems;
}
