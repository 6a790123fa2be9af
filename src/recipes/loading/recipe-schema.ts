// Compiles the recipe JSON Schema (kept in the repo as recipe.schema.json so
// editors can use it) once, and validates documents against it.
import { createRequire } from 'node:module';
import type { Recipe } from '../types.ts';
import { lazyValidator } from './compile-schema.ts';
import { describeSchemaErrors } from './schema-errors.ts';
import { checkSentinelRecipe } from '../types/sentinel/index.ts';
import { checkTemporalRecipe } from '../types/temporal/index.ts';

/** Types with a schema of their own (src/recipes/types/<type>/schema.json). */
const typeCheckers: Record<string, (doc: unknown) => string[]> = {
  temporal: checkTemporalRecipe,
  sentinel: checkSentinelRecipe,
};

const require = createRequire(import.meta.url);
export const recipeSchemaPath: string = require.resolve('../recipe.schema.json');
const validator = lazyValidator<Recipe>(recipeSchemaPath);

/** Returns the problems of `doc` as sentences, or [] when it is a valid recipe. */
export function checkRecipeSchema(doc: unknown): string[] {
  const own = doc && typeof doc === 'object' ? typeCheckers[String((doc as { type?: unknown }).type)] : undefined;
  if (own) return own(doc);
  const validate = validator();
  if (validate(doc)) return [];
  return describeSchemaErrors(validate.errors, doc);
}
