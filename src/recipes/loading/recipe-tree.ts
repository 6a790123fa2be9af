// Loads a recipe and every recipe it names, recursively, and validates the
// whole tree before anything starts: missing names, invalid files, cycles and
// a depth over 8 are refused with the chain that leads there, e.g.
// `pipeline "release" → "qa" → "release": cycle`.
import { RecipeInputError } from '../errors.ts';
import { recipeTypeDef } from '../types/registry.ts';
import type { FoundRecipe } from '../types.ts';
import { findRecipe } from './discovery.ts';

export const MAX_DEPTH = 8;

export interface RecipeTree {
  root: FoundRecipe;
  /** Every recipe of the tree by name. */
  byName: Map<string, FoundRecipe>;
}

function chainText(chain: FoundRecipe[], last?: string): string {
  const [first, ...rest] = chain;
  const head = `${first!.recipe.type ?? 'sequence'} "${first!.recipe.name}"`;
  return [head, ...rest.map((f) => `"${f.recipe.name}"`), ...(last !== undefined ? [`"${last}"`] : [])].join(' → ');
}

export function loadRecipeTree(projectRoot: string, name: string): RecipeTree {
  const root = findRecipe(projectRoot, name);
  const byName = new Map<string, FoundRecipe>([[root.recipe.name, root]]);
  const problems: string[] = [];
  const visit = (found: FoundRecipe, chain: FoundRecipe[]): void => {
    const def = recipeTypeDef(found.recipe.type)!;
    for (const ref of def.children?.(found.recipe) ?? []) {
      if (chain.some((c) => c.recipe.name === ref.name)) {
        problems.push(`${chainText(chain, ref.name)}: cycle (${found.file}: ${ref.where})`);
        continue;
      }
      if (chain.length + 1 > MAX_DEPTH) {
        problems.push(`${chainText(chain, ref.name)}: deeper than ${MAX_DEPTH} levels of recipes`);
        continue;
      }
      let child = byName.get(ref.name);
      if (!child) {
        try {
          child = findRecipe(projectRoot, ref.name);
        } catch (error) {
          const e = error as RecipeInputError;
          const detail = e.problems?.length ? `${e.message.split('\n')[0]}: ${e.problems.join('; ')}` : e.message;
          problems.push(`${chainText(chain, ref.name)}: ${found.file}: ${ref.where}: ${detail}`);
          continue;
        }
        byName.set(ref.name, child);
      }
      const childDef = recipeTypeDef(child.recipe.type)!;
      if (!childDef.planner && !childDef.composite)
        problems.push(`${chainText(chain, ref.name)}: ${found.file}: ${ref.where}: ${childDef.refusal ?? `type "${childDef.type}" cannot be run`}`);
      visit(child, [...chain, child]);
    }
    for (const p of def.check?.(found.recipe, (n) => byName.get(n)) ?? []) problems.push(`${found.file}: ${p}`);
  };
  visit(root, [root]);
  if (problems.length > 0) throw new RecipeInputError(`recipe "${name}": the tree of recipes it runs is invalid; nothing was started`, [...new Set(problems)]);
  return { root, byName };
}
