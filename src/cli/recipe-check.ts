// `vigil recipe check <name>` and `vigil sequence <name> --dry-run`: what a
// run would decide and do, printed without running anything. Exit 0 when a
// run would start, 2 when it would be refused.
import { checkRecipe } from '../recipes/check/check-recipe.ts';
import { planView, renderPlanView } from '../recipes/check/plan-shape.ts';
import { renderCheck } from '../recipes/check/render-check.ts';
import { loadWorkspaceConfig } from '../workspace/workspace-config.ts';
import { ExitCode, type ExitCodeValue } from '../errors/exit-codes.ts';
import { loadRecipeTree } from '../recipes/loading/recipe-tree.ts';
import { parseVarFlags } from '../recipes/variables.ts';
import { systemVault } from '../vault/vault-reader.ts';
import { findProjectRoot } from '../workspace/project-root.ts';

export interface CheckOptions {
  vars: string[];
  json: boolean;
}

export function recipeCheck(name: string, options: CheckOptions): ExitCodeValue {
  const report = checkRecipe({ name, vars: parseVarFlags(options.vars), cwd: process.cwd(), env: process.env, vault: systemVault });
  process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : renderCheck(report));
  return report.ok ? ExitCode.ok : ExitCode.usage;
}

export function sequenceDryRun(name: string, options: CheckOptions & { backend?: string; model?: string }): ExitCodeValue {
  const projectRoot = findProjectRoot(process.cwd());
  const tree = loadRecipeTree(projectRoot, name);
  const view = planView({
    tree,
    projectRoot,
    config: loadWorkspaceConfig(projectRoot),
    env: process.env,
    vars: parseVarFlags(options.vars),
    vault: systemVault,
    cwd: process.cwd(),
    ...(options.backend ? { backend: options.backend } : {}),
    ...(options.model ? { model: options.model } : {}),
  });
  const report = checkRecipe({ name, vars: parseVarFlags(options.vars), cwd: process.cwd(), env: process.env, vault: systemVault });
  if (options.json) process.stdout.write(`${JSON.stringify({ plan: view, check: report }, null, 2)}\n`);
  else {
    const refused = report.recipes.flatMap((r) => r.sections.filter((s) => s.status === 'refused').map((s) => `${s.name} of "${r.name}": ${s.summary}`));
    process.stdout.write(`${renderPlanView(view)}\n`);
    process.stdout.write(
      refused.length === 0
        ? 'preflight: clean; dry run, nothing was run\n'
        : `preflight: the run would be refused (${refused.join('; ')}); see "vigil recipe check ${name}"; dry run, nothing was run\n`,
    );
  }
  return report.ok ? ExitCode.ok : ExitCode.usage;
}
