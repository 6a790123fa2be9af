// `substrate`: a sequence whose steps work on the CIR substrate
// (recipes-and-sdk.md §3). It plans exactly like `sequence`; what makes it a
// substrate is the `cir` block and `query`, which cir-steps.ts applies
// around every step (and which works on any type that has a `cir` block).
import { sequencePlanner } from '../../planning/sequence-planner.ts';
import type { StepsRecipe } from '../../types.ts';
import type { RecipeTypeDef } from '../type-def.ts';
import { typeSchemaFile } from '../schema-path.ts';

export const substrateType: RecipeTypeDef = {
  type: 'substrate',
  summary: 'a sequence whose steps read CIR context (CIR_CONTEXT) and write signals back',
  schemaFile: typeSchemaFile('substrate'),
  planner: {
    type: 'substrate',
    plan: (recipe: StepsRecipe, file: string) => ({ ...sequencePlanner.plan(recipe, file), type: 'substrate' }),
  },
};
