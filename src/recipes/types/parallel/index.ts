// `parallel`: one child run per variable set, each in its own copy, merged back in order (run.ts).
import type { RecipeTypeDef } from '../type-def.ts';
import { typeSchemaFile } from '../schema-path.ts';
import { runParallel } from './run.ts';

export const parallelType: RecipeTypeDef = {
  type: 'parallel',
  summary: 'one run of a recipe per variable set, in isolated copies, merged back in index order',
  schemaFile: typeSchemaFile('parallel'),
  children: (r) => (r.type === 'parallel' && r.recipe ? [{ name: r.recipe, where: 'recipe' }] : []),
  composite: runParallel,
  isolatesChildren: true,
};
