// Recipes written for mentu run unchanged: its fields are mapped to ours
// when the recipe is loaded (docs/recipes.md, "Recipes written for mentu").
// A field with no equivalent is kept out of the run with a warning naming
// it, never a refusal.
import { type Effort, hasSteps, type Recipe, type RecipeStep, type StepsRecipe } from '../types.ts';
import { mapRecipeProviders } from './recipe-providers.ts';

/** mentu's `shell` backend: the step's prompt is run as a shell script (pool/step-task.ts, select.ts). */
export const SHELL_BACKEND = 'shell';

const EFFORTS: Record<string, Effort> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'max', max: 'max' };

/** mentu's `reasoning` as an effort, or a warning naming the field. */
function effortOf(reasoning: string, where: string, warnings: string[]): Effort | undefined {
  const effort = EFFORTS[reasoning];
  if (!effort) warnings.push(`${where}: "${reasoning}" ignored; the efforts are ${Object.keys(EFFORTS).join(', ')} (minimal is low, xhigh is max)`);
  return effort;
}

/** The paths a step may change: the field's own (a path or a list), or with `true` its expected_changes. */
function cleanOutsidePaths(value: unknown, expected: unknown): string[] | null {
  const list = (v: unknown): string[] | null => (typeof v === 'string' && v !== '' ? [v] : Array.isArray(v) && v.length > 0 && v.every((p) => typeof p === 'string' && p !== '') ? (v as string[]) : null);
  return value === true ? list(expected) : list(value);
}

export function mapMentuFields(recipe: Recipe): { recipe: Recipe; warnings: string[]; problems: string[] } {
  // Only a recipe with steps of its own has mentu's fields (every type's schema forbids fields it does not list).
  if (!hasSteps(recipe)) return { recipe, warnings: [], problems: [] };
  const warnings: string[] = [];
  const { backend, model, providers, cloud, reasoning, ...rest } = recipe;
  const own = providers === undefined ? null : mapRecipeProviders(providers);
  const alias = (name: string | undefined) => (name !== undefined ? (own?.mapped.builtin[name] ?? name) : undefined);
  let out: StepsRecipe = rest;
  if (own) {
    warnings.push(...own.warnings);
    out = { ...out, recipe_providers: own.mapped };
  }
  if (cloud !== undefined) warnings.push('cloud: ignored; runs are local here (vigil daemon runs recipes on schedules and observations)');
  const topEffort = reasoning !== undefined ? effortOf(reasoning, 'reasoning', warnings) : undefined;
  const defaultBackend = alias(backend);
  if (defaultBackend !== undefined || model !== undefined || topEffort !== undefined)
    out = {
      ...out,
      defaults: { ...(defaultBackend ? { backend: defaultBackend } : {}), ...(model ? { model } : {}), ...(topEffort ? { effort: topEffort } : {}), ...(recipe.defaults ?? {}) },
    };
  if (out.steps) {
    out = {
      ...out,
      steps: out.steps.map((s, i) => {
        const where = `steps[${i}] ("${s.label}")`;
        const { allowed_tools, max_output_tokens, max_retries, expected_changes, verify, reasoning: stepReasoning, ...step } = s;
        const mapped: RecipeStep = step;
        if (step.backend !== undefined) mapped.backend = alias(step.backend)!;
        const stepBackend = mapped.backend ?? out.defaults?.backend;
        if (stepReasoning !== undefined && step.effort === undefined) {
          const effort = effortOf(stepReasoning, `${where}.reasoning`, warnings);
          if (effort) mapped.effort = effort;
        } else if (stepReasoning !== undefined) warnings.push(`${where}.reasoning: ignored; the step has its own effort`);
        if (allowed_tools !== undefined) {
          if (stepBackend === 'claude') mapped.args = ['--allowedTools', allowed_tools.join(','), ...(step.args ?? [])];
          else warnings.push(`${where}.allowed_tools: ignored; only Claude Code takes a tool list (--allowedTools), and this step's backend is ${stepBackend ?? 'not named in the recipe'}`);
        }
        if (max_output_tokens !== undefined)
          warnings.push(`${where}.max_output_tokens: ignored; no per-step equivalent (HTTP providers take max_tokens in vigil.yml)`);
        if (max_retries !== undefined && max_retries > 0 && !step.retry) mapped.retry = { attempts: max_retries + 1 };
        if (expected_changes !== undefined) warnings.push(`${where}.expected_changes: ignored; no equivalent (a build check or output_schema can check the result)`);
        if (verify?.commands && !step.build_command) mapped.build_command = verify.commands.map((c) => `( ${c}\n)`).join(' && ');
        else if (verify?.commands) warnings.push(`${where}.verify: ignored; the step has its own build_command`);
        if (verify?.git_clean_outside !== undefined) {
          const paths = cleanOutsidePaths(verify.git_clean_outside, expected_changes);
          if (paths) mapped.clean_outside = paths;
          else if (verify.git_clean_outside !== false)
            warnings.push(`${where}.verify.git_clean_outside: ignored; it names no paths (a path, a list of paths, or true with expected_changes listing them)`);
        }
        return mapped;
      }),
    };
  }
  return { recipe: out, warnings, problems: own?.problems ?? [] };
}
