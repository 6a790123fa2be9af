// `pipeline`: other recipes run in order, each entry when its `on` holds (run.ts).
import { hasSteps, type Recipe } from '../../types.ts';
import type { RecipeTypeDef, TreeLookup } from '../type-def.ts';
import { typeSchemaFile } from '../schema-path.ts';
import { runPipeline } from './run.ts';

function check(recipe: Recipe, lookup: TreeLookup): string[] {
  if (recipe.type !== 'pipeline') return [];
  const problems: string[] = [];
  (recipe.sequences ?? []).forEach((entry, i) => {
    if (entry.from === undefined) return;
    const child = lookup(entry.name)?.recipe;
    const labels = (child && hasSteps(child) ? child.steps : []).map((s) => s.label);
    if (child && !hasSteps(child)) problems.push(`sequences[${i}].from: recipe "${entry.name}" is a ${child.type} recipe, which has no steps to start from`);
    else if (child && !labels.includes(entry.from))
      problems.push(`sequences[${i}].from: recipe "${entry.name}" has no step "${entry.from}"; steps: ${labels.join(', ')}`);
  });
  return problems;
}

export const pipelineType: RecipeTypeDef = {
  type: 'pipeline',
  summary: 'other recipes in order; each entry runs on success, failure or always',
  schemaFile: typeSchemaFile('pipeline'),
  children: (r) => (r.type === 'pipeline' ? (r.sequences ?? []).map((e, i) => ({ name: e.name, where: `sequences[${i}].name` })) : []),
  check,
  composite: runPipeline,
};
