// `convergent`: N strategies of a recipe, each scored; the best is merged back (run.ts).
import type { RecipeTypeDef } from '../type-def.ts';
import { typeSchemaFile } from '../schema-path.ts';
import { runConvergent } from './run.ts';

export const convergentType: RecipeTypeDef = {
  type: 'convergent',
  summary: 'several strategies of one recipe, scored by another; the winner is merged back',
  schemaFile: typeSchemaFile('convergent'),
  children: (r) =>
    r.type !== 'convergent'
      ? []
      : [...(r.recipe ? [{ name: r.recipe, where: 'recipe' }] : []), ...(r.scorer ? [{ name: r.scorer, where: 'scorer' }] : [])],
  composite: runConvergent,
  isolatesChildren: true,
};
