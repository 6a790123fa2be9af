// Runs one recipe of the tree, whatever its type: a type with a planner runs
// its steps (steps-node.ts); a composite type runs its children
// (composite-node.ts), both reached through the table rt.nodes.
// Whole-tree validation happened before the root started.
import { RecipeInputError } from '../errors.ts';
import { recipeTypeDef } from '../types/registry.ts';
import type { NodeRequest, NodeResult, TreeRuntime } from './runtime.ts';

export function runNode(rt: TreeRuntime, node: NodeRequest): Promise<NodeResult> {
  const def = recipeTypeDef(node.found.recipe.type);
  if (def?.planner) return rt.nodes.steps(rt, node);
  if (def?.composite) return rt.nodes.composite(rt, node, def.composite);
  throw new RecipeInputError(`${node.found.file}: recipe "${node.found.recipe.name}" has type "${def?.type}": ${def?.refusal ?? 'it cannot be run'}`);
}
