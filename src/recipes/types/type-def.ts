// What a recipe type is: the definition each type in src/recipes/types/<type>/
// gives — its JSON Schema, the recipes it names (for whole-tree validation),
// checks the schema cannot express, and how `vigil sequence` runs it — planned
// onto the step executor (`planner`), or composed of child runs (`composite`).
// A type with neither is known (listed, validated) but refused by
// `vigil sequence` with its `refusal`. registry.ts lists them all.
import type { Planner } from '../planning/plan.ts';
import type { FoundRecipe, Recipe, RecipeType, StepsRecipe } from '../types.ts';
import type { CompositeRunner } from './composite.ts';

/** A recipe named by another, with the field that names it (`sequences[1].name`). */
export interface ChildRef {
  name: string;
  where: string;
}

/** Looks up an already loaded recipe of the tree by name. */
export type TreeLookup = (name: string) => FoundRecipe | undefined;

export interface RecipeTypeDef {
  readonly type: RecipeType;
  /** One line for `vigil recipe list --types` and docs. */
  readonly summary: string;
  /** Absolute path of the type's JSON Schema. */
  readonly schemaFile: string;
  /** Validates a document of this type itself (schema and more), instead of the runner compiling `schemaFile`. */
  validate?(doc: unknown): string[];
  children?(recipe: Recipe): ChildRef[];
  /** Problems the schema cannot express, found once the whole tree is loaded. */
  check?(recipe: Recipe, lookup: TreeLookup): string[];
  /** Plans a recipe of this type; only types whose recipes list their own steps have one. */
  planner?: Planner<StepsRecipe>;
  composite?: CompositeRunner;
  /** Its children work in copies of the workspace (isolation/choose.ts says which), merged back. */
  isolatesChildren?: boolean;
  /** Why `vigil sequence` does not run this type (when it has neither planner nor composite). */
  refusal?: string;
}
