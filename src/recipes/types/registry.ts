// The registry of recipe types: one static table, every type vigil knows, in
// the order `vigil recipe types` lists them. A new type adds its folder under
// src/recipes/types/ (its definition, type-def.ts) and one line here.
import { adversarialType } from './adversarial/index.ts';
import { compoundType } from './compound/index.ts';
import { convergentType } from './convergent/index.ts';
import { parallelType } from './parallel/index.ts';
import { pipelineType } from './pipeline/index.ts';
import { sentinelSchemaPath, checkSentinelRecipe } from './sentinel/index.ts';
import { sequenceType } from './sequence/index.ts';
import { substrateType } from './substrate/index.ts';
import { checkTemporalRecipe, temporalSchemaPath } from './temporal/index.ts';
import type { RecipeTypeDef } from './type-def.ts';

const temporalType: RecipeTypeDef = {
  type: 'temporal',
  summary: 'a schedule that runs a command, script or recipe (vigil daemon)',
  schemaFile: temporalSchemaPath,
  validate: checkTemporalRecipe,
  refusal: 'temporal recipes are run by their schedule under "vigil daemon" (or "vigil temporal fire <name>"), not by "vigil sequence"',
};

const sentinelType: RecipeTypeDef = {
  type: 'sentinel',
  summary: 'reacts to observations on a Vigil monitor (vigil daemon)',
  schemaFile: sentinelSchemaPath,
  validate: checkSentinelRecipe,
  refusal: 'sentinel recipes react to monitor observations under "vigil daemon", not "vigil sequence"',
};

const recipeTypes: readonly RecipeTypeDef[] = [sequenceType, pipelineType, compoundType, parallelType, adversarialType, convergentType, temporalType, sentinelType, substrateType];

const byType = new Map(recipeTypes.map((def) => [def.type as string, def]));

export function recipeTypeDef(type: string | undefined): RecipeTypeDef | undefined {
  return byType.get(type ?? 'sequence');
}

export function recipeTypeDefs(): RecipeTypeDef[] {
  return [...recipeTypes];
}
