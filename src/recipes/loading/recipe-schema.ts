// Compiles the recipe JSON Schema (kept in the repo as recipe.schema.json so
// editors can use it) once, and validates documents against it.
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import type { Recipe } from '../types.ts';
import { describeSchemaErrors } from './schema-errors.ts';

const require = createRequire(import.meta.url);
export const recipeSchemaPath: string = require.resolve('../recipe.schema.json');
const schema = require('../recipe.schema.json') as object;

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
const validate = ajv.compile<Recipe>(schema);

/** Returns the problems of `doc` as sentences, or [] when it is a valid recipe. */
export function checkRecipeSchema(doc: unknown): string[] {
  if (validate(doc)) return [];
  return describeSchemaErrors(validate.errors, doc);
}
