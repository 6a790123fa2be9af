// sdk.sequence: run a recipe and get its output; list recipes. A script's
// variables reach the run as data (`--data-var`, src/recipes/outside-vars.ts):
// the sandbox is no way around it.
import { discoverRecipes, findRecipe } from '../../recipes/loading/discovery.ts';
import type { SdkContext } from '../../workspace/context.ts';
import { invalid } from '../../errors/vigil-error.ts';
import { runRecipe } from '../../recipes/run-recipe.ts';
import { hasSteps } from '../../recipes/types.ts';

export interface SequenceRunOptions {
  vars?: Record<string, string>;
  model?: string;
  backend?: string;
  /** 1-based number of the step to resume from (the recipe's latest run supplies earlier steps). */
  startFrom?: number;
}

export function sequenceArgs(ctx: SdkContext, name: string, options: SequenceRunOptions): string[] {
  if (typeof name !== 'string' || name.length === 0) throw invalid('name', 'must be a recipe name');
  const o = options ?? {};
  const args: string[] = [];
  if (o.vars !== undefined && o.vars !== null) {
    if (typeof o.vars !== 'object' || Array.isArray(o.vars)) throw invalid('vars', 'must be an object of NAME: value');
    for (const [k, v] of Object.entries(o.vars)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw invalid(`vars.${k}`, 'names are letters, digits and "_"');
      args.push('--data-var', `${k}=${String(v)}`);
    }
  }
  if (o.backend) args.push('--backend', String(o.backend));
  if (o.model !== undefined && o.model !== null) {
    if (typeof o.model !== 'string' || o.model.length === 0) throw invalid('model', 'must be a model id');
    args.push('--model', o.model);
  }
  if (o.startFrom !== undefined && o.startFrom !== null) {
    const recipe = findRecipe(ctx.projectRoot, name).recipe;
    const steps = hasSteps(recipe) ? (recipe.steps ?? []) : [];
    if (!Number.isInteger(o.startFrom) || o.startFrom < 1 || o.startFrom > steps.length) {
      throw invalid('startFrom', `must be a step number from 1 to ${steps.length}; got ${JSON.stringify(o.startFrom)}`);
    }
    args.push('--from', steps[o.startFrom - 1]!.label);
  }
  return args;
}

export function sequenceNamespace(ctx: SdkContext, signal: AbortSignal) {
  return {
    async run(name: string, options?: SequenceRunOptions): Promise<string> {
      const args = sequenceArgs(ctx, name, options ?? {});
      const { output } = await runRecipe({ name, args, cwd: ctx.workspace, projectRoot: ctx.projectRoot, env: ctx.env, signal, progress: process.stderr });
      return output;
    },
    list(): Array<{ name: string; type: string }> {
      return discoverRecipes(ctx.projectRoot).recipes.map((r) => ({ name: r.recipe.name, type: r.recipe.type ?? 'sequence' }));
    },
  };
}
