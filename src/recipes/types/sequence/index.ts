// `sequence`: agent steps ordered by depends_on and wave, planned onto the step executor.
import { sequencePlanner } from '../../planning/sequence-planner.ts';
import type { RecipeTypeDef } from '../type-def.ts';
import { typeSchemaFile } from '../schema-path.ts';

export const sequenceType: RecipeTypeDef = {
  type: 'sequence',
  summary: 'agent steps ordered by depends_on and wave',
  schemaFile: typeSchemaFile('sequence'),
  planner: sequencePlanner,
};
