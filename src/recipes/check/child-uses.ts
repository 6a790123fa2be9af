// The child runs a composite recipe starts, with the variables it hands each
// (its entries' `vars` and the built-ins its type adds: ROUND, STRATEGY,
// PARALLEL_INDEX, LAYER_<NAME>_OUTPUT …) and the `pre` commands it runs
// first. Built-ins that are paths inside the run record get a stand-in of
// that shape, so the checks judge them as the run would.
import type { Recipe } from '../types.ts';
import { DEFAULT_ROUNDS } from '../types/adversarial/run.ts';
import { DEFAULT_STRATEGIES } from '../types/convergent/run.ts';

export interface ChildUse {
  name: string;
  /** The field of the parent that starts it: `sequences[0]`, `layers[1] ("api")`, `blue`. */
  where: string;
  vars: Record<string, string>;
  pre: string[];
}

const runPath = (name: string) => `.vigil/runs/RUN/${name.toLowerCase()}`;
const layerVar = (layer: string) => `LAYER_${layer.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_OUTPUT`;

export function childUses(recipe: Recipe): ChildUse[] {
  switch (recipe.type) {
    case 'pipeline':
      return (recipe.sequences ?? []).map((e, i) => ({ name: e.name, where: `sequences[${i}]`, vars: e.vars ?? {}, pre: e.pre ?? [] }));
    case 'compound': {
      const layers = recipe.layers ?? [];
      return layers.map((l, i) => {
        const earlier = Object.fromEntries(layers.filter((o) => o !== l).map((o) => [layerVar(o.name), runPath(o.name)]));
        return { name: l.sequence, where: `layers[${i}] ("${l.name}")`, vars: { ...earlier, ...(l.vars ?? {}) }, pre: [] };
      });
    }
    case 'parallel': {
      const sets = recipe.vars && recipe.vars.length > 0 ? recipe.vars : [{}];
      return sets.map((v, i) => ({ name: recipe.recipe!, where: `vars[${i}]`, vars: { ...v, PARALLEL_INDEX: String(i), PARALLEL_COUNT: String(sets.length) }, pre: [] }));
    }
    case 'adversarial': {
      const builtins = { ROUND: '1', ROUNDS: String(recipe.rounds ?? DEFAULT_ROUNDS), BLUE_OUTPUT: runPath('blue'), RED_OUTPUT: runPath('red'), JUDGE_OUTPUT: runPath('judge') };
      return (['blue', 'red', 'judge'] as const)
        .filter((side) => recipe[side])
        .map((side) => ({ name: recipe[side]!.recipe, where: side, vars: { ...(recipe[side]!.vars ?? {}), ...builtins }, pre: [] }));
    }
    case 'convergent': {
      // Each strategy runs the recipe, then its scorer, in its own copy.
      const n = recipe.strategies ?? DEFAULT_STRATEGIES;
      return Array.from({ length: n }, (_, i) => {
        const builtins = { STRATEGY: String(i + 1), STRATEGIES: String(n) };
        return [
          { name: recipe.recipe!, where: `recipe (strategy ${i + 1})`, vars: builtins, pre: [] },
          ...(recipe.scorer ? [{ name: recipe.scorer, where: `scorer (strategy ${i + 1})`, vars: { ...builtins, CANDIDATE_DIR: runPath('candidate') }, pre: [] }] : []),
        ];
      }).flat();
    }
    default:
      return [];
  }
}
