// How many steps of a tree may run at once, to size the step pool: a
// sequence's widest level, a parallel's fanout times its child, and so on.
import type { RecipeTree } from '../loading/recipe-tree.ts';
import { recipeTypeDef } from '../types/registry.ts';
import { type FoundRecipe, hasSteps } from '../types.ts';

const CAP = 256;

function widestLevel(found: FoundRecipe): number {
  const def = recipeTypeDef(found.recipe.type);
  if (!def?.planner || !hasSteps(found.recipe)) return 1;
  const plan = def.planner.plan(found.recipe, found.file);
  const depth = new Map<string, number>();
  for (const s of plan.steps) depth.set(s.label, Math.max(0, ...s.needs.map((n) => (depth.get(n) ?? 0) + 1)));
  const counts = new Map<number, number>();
  for (const d of depth.values()) counts.set(d, (counts.get(d) ?? 0) + 1);
  return Math.max(1, ...counts.values());
}

export function treeConcurrency(tree: RecipeTree, found: FoundRecipe = tree.root): number {
  const r = found.recipe;
  const of = (name: string | undefined): number => {
    const child = name ? tree.byName.get(name) : undefined;
    return child ? treeConcurrency(tree, child) : 1;
  };
  let n: number;
  switch (r.type) {
    case 'pipeline':
      n = Math.max(1, ...(r.sequences ?? []).map((e) => of(e.name)));
      break;
    case 'compound':
      n = (r.layers ?? []).reduce((sum, l) => sum + of(l.sequence), 0);
      break;
    case 'parallel':
      n = Math.min(r.fanout ?? 4, r.vars?.length ?? 1) * of(r.recipe);
      break;
    case 'adversarial':
      n = Math.max(of(r.blue?.recipe), of(r.red?.recipe), of(r.judge?.recipe));
      break;
    case 'convergent':
      n = (r.fanout ?? r.strategies ?? 3) * Math.max(of(r.recipe), of(r.scorer));
      break;
    default:
      n = widestLevel(found);
  }
  return Math.min(CAP, Math.max(1, n));
}
