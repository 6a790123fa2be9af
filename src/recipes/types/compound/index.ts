// `compound`: a DAG of layers (each a recipe) sharing one CIR scope (run.ts).
import type { Recipe } from '../../types.ts';
import type { RecipeTypeDef } from '../type-def.ts';
import { typeSchemaFile } from '../schema-path.ts';
import { layerPlan, runCompound } from './run.ts';

function check(recipe: Recipe): string[] {
  if (recipe.type !== 'compound') return [];
  const problems: string[] = [];
  const layers = recipe.layers ?? [];
  const seen = new Map<string, number>();
  layers.forEach((l, i) => {
    if (seen.has(l.name)) problems.push(`layers[${i}].name: duplicate layer name "${l.name}" (first used by layers[${seen.get(l.name)}])`);
    else seen.set(l.name, i);
  });
  layers.forEach((l, i) => {
    for (const dep of l.depends_on ?? []) {
      if (dep === l.name) problems.push(`layers[${i}] ("${l.name}").depends_on: a layer cannot depend on itself`);
      else if (!seen.has(dep)) problems.push(`layers[${i}] ("${l.name}").depends_on: unknown layer "${dep}"; layers: ${[...seen.keys()].join(', ')}`);
    }
  });
  if (problems.length === 0) {
    const { cycle } = layerPlan(layers);
    if (cycle) problems.push(`layers.depends_on: dependency cycle ${cycle.join(' → ')} (a layer without depends_on waits for the one before it)`);
  }
  return problems;
}

export const compoundType: RecipeTypeDef = {
  type: 'compound',
  summary: 'layers of recipes (a DAG by depends_on) sharing the CIR scope run:<id>',
  schemaFile: typeSchemaFile('compound'),
  children: (r) => (r.type !== 'compound' ? [] : (r.layers ?? []).map((l, i) => ({ name: l.sequence, where: `layers[${i}] ("${l.name}").sequence` }))),
  check,
  composite: runCompound,
};
