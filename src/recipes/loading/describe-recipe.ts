// `vigil recipe show <name>`: what a recipe is and asks for — its type,
// description, file, declared parameters, and its steps or the recipes it runs.
import type { FoundRecipe } from '../types.ts';

export function describeRecipe(found: FoundRecipe): string {
  const { recipe, file, scope } = found;
  const out = [`${recipe.type ?? 'sequence'} recipe "${recipe.name}"${recipe.description ? `: ${recipe.description}` : ''}`, `file: ${file} (${scope})`];
  const params = Object.entries(recipe.parameters ?? {});
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
  if (recipe.steps) {
    out.push('steps:');
    for (const s of recipe.steps) {
      const facts = [s.backend && `backend ${s.backend}`, s.model && `model ${s.model}`, s.depends_on && `after ${s.depends_on.join(', ') || 'nothing'}`, s.if && `if ${s.if}`].filter(Boolean);
      out.push(`  ${s.label}${facts.length > 0 ? `  (${facts.join('; ')})` : ''}`);
    }
  }
  const runs = [
    ...(recipe.sequences ?? []).map((e) => e.name),
    ...(recipe.layers ?? []).map((l) => l.sequence),
    ...[recipe.recipe, recipe.scorer, recipe.blue?.recipe, recipe.red?.recipe, recipe.judge?.recipe].filter((x): x is string => typeof x === 'string'),
  ];
  if (runs.length > 0) out.push(`runs: ${[...new Set(runs)].join(', ')}`);
  return `${out.join('\n')}\n`;
}
