// Every recipe type vigil knows, registered once. A new type adds its folder
// under src/recipes/types/ and one line here.
import { adversarialType } from './adversarial/index.ts';
import { compoundType } from './compound/index.ts';
import { convergentType } from './convergent/index.ts';
import { parallelType } from './parallel/index.ts';
import { pipelineType } from './pipeline/index.ts';
import { registerRecipeType } from './registry.ts';
import { sentinelSchemaPath, checkSentinelRecipe } from './sentinel/index.ts';
import { sequenceType } from './sequence/index.ts';
import { substrateType } from './substrate/index.ts';
import { checkTemporalRecipe, temporalSchemaPath } from './temporal/index.ts';

for (const def of [sequenceType, pipelineType, compoundType, parallelType, adversarialType, convergentType]) registerRecipeType(def);

registerRecipeType({
  type: 'temporal',
  summary: 'a schedule that runs a command, script or recipe (vigil daemon)',
  schemaFile: temporalSchemaPath,
  validate: checkTemporalRecipe,
  refusal: 'temporal recipes are run by their schedule under "vigil daemon" (or "vigil temporal fire <name>"), not by "vigil sequence"',
});
registerRecipeType({
  type: 'sentinel',
  summary: 'reacts to observations on a Vigil monitor (vigil daemon)',
  schemaFile: sentinelSchemaPath,
  validate: checkSentinelRecipe,
  refusal: 'sentinel recipes react to monitor observations under "vigil daemon", not "vigil sequence"',
});
registerRecipeType(substrateType);
