// The registry of recipe types the runner can plan. Adding a type means
// adding a planner here; the executor, backends and records stay the same.
import { RecipeInputError } from '../errors.ts';
import type { Recipe } from '../types.ts';
import type { Plan, Planner } from './plan.ts';
import { sequencePlanner } from './sequence-planner.ts';

const planners = new Map<string, Planner<Recipe>>([[sequencePlanner.type, sequencePlanner]]);

export function planRecipe(recipe: Recipe, file: string): Plan {
  const type = recipe.type ?? 'sequence';
  const planner = planners.get(type);
  if (!planner) {
    throw new RecipeInputError(
      `${file}: recipe "${recipe.name}" has type "${type}", which this version of vigil cannot run yet; runnable types: ${[...planners.keys()].join(', ')}`,
    );
  }
  return planner.plan(recipe, file);
}
