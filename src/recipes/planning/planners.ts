// Plans a recipe whose type runs on the step executor (src/recipes/types/
// registry.ts says which); other types are refused naming why.
import { RecipeInputError } from '../errors.ts';
import { recipeTypeDef, recipeTypeDefs } from '../types/registry.ts';
import type { Recipe } from '../types.ts';
import type { Plan } from './plan.ts';

export function planRecipe(recipe: Recipe, file: string): Plan {
  const type = recipe.type ?? 'sequence';
  const def = recipeTypeDef(type);
  if (!def?.planner) {
    const runnable = recipeTypeDefs()
      .filter((d) => d.planner || d.composite)
      .map((d) => d.type);
    throw new RecipeInputError(
      `${file}: recipe "${recipe.name}" has type "${type}": ${def?.refusal ?? 'it has no steps to plan'}; runnable types: ${runnable.join(', ')}`,
    );
  }
  return def.planner.plan(recipe, file);
}
