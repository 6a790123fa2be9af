// The settings a recipe's steps run with: vigil.yml's, with the recipe's own
// `providers` added (loading/recipe-providers.ts) and winning a name clash —
// except an agent Vigil has no backend for, where vigil.yml's provider of
// that name is the configuration that makes it run.
import { hasSteps, type Recipe } from '../types.ts';
import type { WorkspaceConfig } from '../../workspace/workspace-config.ts';

export function configForRecipe(config: WorkspaceConfig, recipe: Recipe): WorkspaceConfig {
  const own = hasSteps(recipe) ? recipe.recipe_providers : undefined;
  if (!own) return config;
  const unavailable = Object.fromEntries(Object.entries(own.unavailable).filter(([name]) => !config.providers[name]));
  return { ...config, providers: { ...config.providers, ...own.providers }, unavailable: { ...(config.unavailable ?? {}), ...unavailable } };
}
