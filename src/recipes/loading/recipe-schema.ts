// Compiles the recipe JSON Schema (kept in the repo as recipe.schema.json so
// editors can use it) once, and validates documents against it.
import { createRequire } from 'node:module';
import type { Recipe } from '../types.ts';
import { lazyValidator } from './compile-schema.ts';
import { describeSchemaErrors } from './schema-errors.ts';

const require = createRequire(import.meta.url);
export const recipeSchemaPath: string = require.resolve('../recipe.schema.json');
const validator = lazyValidator<Recipe>(recipeSchemaPath);

/** Returns the problems of `doc` as sentences, or [] when it is a valid recipe. */
export function checkRecipeSchema(doc: unknown): string[] {
  const validate = validator();
  if (validate(doc)) return [];
  return describeSchemaErrors(validate.errors, doc);
}
