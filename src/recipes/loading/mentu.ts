// Recipes written for mentu run unchanged: its fields are mapped to ours
// when the recipe is loaded (docs/recipes.md, "Recipes written for mentu").
// A field with no equivalent is kept out of the run with a warning naming
// it, never a refusal.
import type { Recipe, RecipeStep } from '../types.ts';

/** mentu's `shell` backend: the step's prompt is run as a shell script (pool/step-task.ts, select.ts). */
export const SHELL_BACKEND = 'shell';

export function mapMentuFields(recipe: Recipe): { recipe: Recipe; warnings: string[] } {
  const warnings: string[] = [];
  const { backend, model, providers, ...rest } = recipe;
  let out: Recipe = rest;
  if (backend !== undefined || model !== undefined)
    out = { ...out, defaults: { ...(backend ? { backend } : {}), ...(model ? { model } : {}), ...(recipe.defaults ?? {}) } };
  if (providers !== undefined) warnings.push('providers: ignored; backends come from "providers" in vigil.yml (docs/recipes.md, Backends)');
  if (out.steps) {
    out = {
      ...out,
      steps: out.steps.map((s, i) => {
        const where = `steps[${i}] ("${s.label}")`;
        const { allowed_tools, max_output_tokens, max_retries, expected_changes, verify, ...step } = s;
        const mapped: RecipeStep = step;
        const stepBackend = step.backend ?? backend ?? recipe.defaults?.backend;
        if (allowed_tools !== undefined) {
          if (stepBackend === 'claude') mapped.args = ['--allowedTools', allowed_tools.join(','), ...(step.args ?? [])];
          else warnings.push(`${where}.allowed_tools: ignored; only Claude Code takes a tool list (--allowedTools), and this step's backend is ${stepBackend ?? 'not named in the recipe'}`);
        }
        if (max_output_tokens !== undefined)
          warnings.push(`${where}.max_output_tokens: ignored; no per-step equivalent (HTTP providers take max_tokens in vigil.yml)`);
        if (max_retries !== undefined && max_retries > 0 && !step.retry) mapped.retry = { attempts: max_retries + 1 };
        if (expected_changes !== undefined) warnings.push(`${where}.expected_changes: ignored; no equivalent (a build check or output_schema can check the result)`);
        if (verify && !step.build_command) mapped.build_command = verify.commands.map((c) => `( ${c}\n)`).join(' && ');
        else if (verify) warnings.push(`${where}.verify: ignored; the step has its own build_command`);
        return mapped;
      }),
    };
  }
  return { recipe: out, warnings };
}
