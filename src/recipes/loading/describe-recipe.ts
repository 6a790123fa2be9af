// `vigil recipe show <name>`: what a recipe is and asks for — its type,
// description, file, declared parameters, and its steps or the recipes it runs.
import { type FoundRecipe, hasSteps, isRunnable, type Recipe } from '../types.ts';

export function describeRecipe(found: FoundRecipe): string {
  const { recipe, file, scope } = found;
  const out = [`${recipe.type ?? 'sequence'} recipe "${recipe.name}"${recipe.description ? `: ${recipe.description}` : ''}`, `file: ${file} (${scope})`];
  const params = Object.entries((isRunnable(recipe) ? recipe.parameters : undefined) ?? {});
  if (params.length === 0) out.push('parameters: none declared');
  else {
    out.push('parameters:');
    for (const [name, p] of params) {
      const facts = [
        p.required ? 'required' : 'optional',
        p.default !== undefined ? `default ${JSON.stringify(String(p.default))}` : null,
        p.choices ? `choices ${p.choices.map(String).join(', ')}` : null,
      ].filter(Boolean);
      out.push(`  ${name}  ${facts.join(', ')}${p.description ? `  — ${p.description}` : ''}`);
    }
  }
  if (hasSteps(recipe) && recipe.steps) {
    out.push('steps:');
    for (const s of recipe.steps) {
      const facts = [s.backend && `backend ${s.backend}`, s.model && `model ${s.model}`, s.depends_on && `after ${s.depends_on.join(', ') || 'nothing'}`, s.if && `if ${s.if}`].filter(Boolean);
      out.push(`  ${s.label}${facts.length > 0 ? `  (${facts.join('; ')})` : ''}`);
    }
  }
  const runs = recipesRun(recipe);
  if (runs.length > 0) out.push(`runs: ${[...new Set(runs)].join(', ')}`);
  return `${out.join('\n')}\n`;
}

/** The recipes a composite names, in the order its fields are written. */
function recipesRun(recipe: Recipe): string[] {
  switch (recipe.type) {
    case 'pipeline':
      return (recipe.sequences ?? []).map((e) => e.name);
    case 'compound':
      return (recipe.layers ?? []).map((l) => l.sequence);
    case 'parallel':
      return [recipe.recipe];
    case 'convergent':
      return [recipe.recipe, recipe.scorer];
    case 'adversarial':
      return [recipe.blue?.recipe, recipe.red?.recipe, recipe.judge?.recipe].filter((x): x is string => typeof x === 'string');
    default:
      return [];
  }
}
