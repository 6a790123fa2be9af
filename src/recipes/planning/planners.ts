// Plans a recipe whose type runs on the step executor (src/recipes/types/
// registry.ts says which); other types are refused naming why.
import { RecipeInputError } from '../errors.ts';
import { recipeTypeDef, recipeTypeDefs } from '../types/registry.ts';
import { type FoundRecipe, hasSteps, type Recipe, type StepsRecipe } from '../types.ts';
import type { Plan } from './plan.ts';

function refusal(recipe: Recipe, file: string): RecipeInputError {
  const type = recipe.type ?? 'sequence';
  const runnable = recipeTypeDefs()
    .filter((d) => d.planner || d.composite)
    .map((d) => d.type);
  return new RecipeInputError(
    `${file}: recipe "${recipe.name}" has type "${type}": ${recipeTypeDef(type)?.refusal ?? 'it has no steps to plan'}; runnable types: ${runnable.join(', ')}`,
  );
}

/** The found recipe as one whose type plans steps; else the refusal naming why. */
export function withSteps(found: FoundRecipe): FoundRecipe<StepsRecipe> {
  const { recipe } = found;
  if (recipeTypeDef(recipe.type)?.planner && hasSteps(recipe)) return { ...found, recipe };
  throw refusal(recipe, found.file);
}

export function planRecipe(recipe: Recipe, file: string): Plan {
  const def = recipeTypeDef(recipe.type);
  if (def?.planner && hasSteps(recipe)) return def.planner.plan(recipe, file);
  throw refusal(recipe, file);
}
