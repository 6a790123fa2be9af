// A valid recipe as written, turned into the shape the planners run: the
// recipe's `defaults` filled into each step that does not set them, an
// inline `prompt` beside `args`, and a parallel recipe's `matrix` expanded
// into one set of variables per child.
import { hasSteps, type Recipe, type RecipeStep } from '../types.ts';
import { mapMentuFields } from './mentu.ts';

/** At most this many children from one matrix (a parallel recipe's fanout bounds how many run at once). */
export const MATRIX_LIMIT = 256;

export interface Matrix {
  include?: Array<Record<string, string>>;
  exclude?: Array<Record<string, string>>;
  [name: string]: unknown;
}

/** Returns the normalised recipe, or the problems that keep it from running (field paths named). */
export function normalizeRecipe(recipe: Recipe): { recipe: Recipe; problems: string[] } {
  const mentu = mapMentuFields(recipe);
  const problems: string[] = [...mentu.problems];
  let out: Recipe = mentu.recipe;
  if (mentu.warnings.length > 0) out = { ...out, load_warnings: mentu.warnings };
  if (hasSteps(out) && out.steps) {
    const d = out.defaults ?? {};
    const steps = out.steps.map((s, i): RecipeStep => {
      if (s.args === undefined && s.prompt === undefined) problems.push(`steps[${i}] ("${s.label}"): needs "args", "prompt" or both`);
      return {
        ...(d.backend ? { backend: d.backend } : {}),
        ...(d.model ? { model: d.model } : {}),
        ...(d.effort ? { effort: d.effort } : {}),
        ...(d.timeout ? { timeout: d.timeout } : {}),
        ...s,
        args: s.args ?? [],
      };
    });
    out = { ...out, steps };
  }
  if (recipe.type === 'parallel' && out.type === 'parallel') {
    if (!recipe.vars && !recipe.matrix) problems.push('(top level): a parallel recipe needs "vars", "matrix" or both');
    if (recipe.matrix) {
      const expanded = expandMatrix(recipe.matrix as Matrix);
      if (typeof expanded === 'string') problems.push(`matrix: ${expanded}`);
      else out = { ...out, vars: [...(recipe.vars ?? []), ...expanded] };
    }
  }
  return { recipe: out, problems };
}

/** The product of the matrix's lists, without the excluded combinations, with the included ones; or why not. */
export function expandMatrix(matrix: Matrix): Array<Record<string, string>> | string {
  const axes = Object.entries(matrix).filter(([k]) => k !== 'include' && k !== 'exclude') as Array<[string, unknown[]]>;
  let size = 1;
  for (const [, values] of axes) size *= values.length;
  if (size > MATRIX_LIMIT) return `${axes.map(([k, v]) => `${k} (${v.length})`).join(' × ')} makes ${size} combinations; at most ${MATRIX_LIMIT}`;
  let combos: Array<Record<string, string>> = axes.length > 0 ? [{}] : [];
  for (const [name, values] of axes) combos = combos.flatMap((c) => values.map((v) => ({ ...c, [name]: String(v) })));
  const matches = (combo: Record<string, string>, pattern: Record<string, string>) => Object.entries(pattern).every(([k, v]) => combo[k] === String(v));
  for (const [i, pattern] of (matrix.exclude ?? []).entries()) {
    const unknown = Object.keys(pattern).filter((k) => !axes.some(([a]) => a === k));
    if (unknown.length > 0) return `exclude[${i}]: ${unknown.join(', ')} is not a variable of the matrix (${axes.map(([a]) => a).join(', ') || 'none'})`;
    combos = combos.filter((c) => !matches(c, pattern));
  }
  // As in GitHub Actions: an include that matches existing combinations in all of the matrix's own
  // variables adds its extra variables to them; otherwise it is a combination of its own.
  for (const extra of matrix.include ?? []) {
    const own = Object.fromEntries(Object.entries(extra).filter(([k]) => axes.some(([a]) => a === k)));
    const hits = Object.keys(own).length > 0 ? combos.filter((c) => matches(c, own)) : [];
    if (hits.length > 0) for (const c of hits) Object.assign(c, Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, String(v)])));
    else combos.push(Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, String(v)])));
  }
  if (combos.length === 0) return 'no combination is left (every one was excluded)';
  if (combos.length > MATRIX_LIMIT) return `${combos.length} combinations; at most ${MATRIX_LIMIT}`;
  return combos;
}
