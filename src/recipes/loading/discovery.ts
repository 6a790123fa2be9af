// Finds recipes in <project>/.vigil/recipes/ and ~/.vigil/recipes/ ($VIGIL_HOME/recipes), written
// as .json, .yml or .yaml. The project wins when both define the same name; two files of one
// folder with the same name are an error naming both, and neither runs. Every file is parsed and
// validated against the schema; broken files are reported, never run.
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { vigilHome } from '../../home/home.ts';
import { RecipeInputError } from '../errors.ts';
import type { FoundRecipe, Recipe, RecipeScope } from '../types.ts';
import { normalizeRecipe } from './normalize.ts';
import { checkRecipeSchema } from './recipe-schema.ts';
import { isRecipeFile, parseRecipeText, recipeFileBase } from './recipe-text.ts';
import { readBoundedText } from '../../text/bounded-file.ts';

export interface RecipeProblem {
  file: string;
  scope: RecipeScope;
  problems: string[];
}

export interface Discovery {
  recipes: FoundRecipe[];
  broken: RecipeProblem[];
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function recipeDirs(projectRoot: string): Array<{ dir: string; scope: RecipeScope }> {
  const dirs: Array<{ dir: string; scope: RecipeScope }> = [{ dir: join(projectRoot, '.vigil', 'recipes'), scope: 'project' }];
  // The user's recipes live in the user folder, which VIGIL_HOME moves (with the vault).
  const user = join(vigilHome(), 'recipes');
  if (resolve(user) !== resolve(dirs[0]!.dir)) dirs.push({ dir: user, scope: 'user' });
  return dirs;
}

/** The largest recipe file read: a file far past it is not a recipe, and parsing it would hold it in memory several times. */
const maxRecipeBytes = 1024 * 1024;

/** Parses and validates one recipe file. */
export function readRecipeFile(file: string): Recipe {
  let text: string;
  try {
    text = readBoundedText(file, maxRecipeBytes, 'a recipe file is at most 1 MB (long prompts belong in files its steps read)');
  } catch (error) {
    throw new RecipeInputError(`${file}: cannot read the recipe: ${(error as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseRecipeText(file, text);
  } catch (error) {
    throw new RecipeInputError(`${file}: ${(error as Error).message}`);
  }
  const problems = checkRecipeSchema(doc);
  if (problems.length > 0) throw new RecipeInputError(`${file}: invalid recipe`, problems);
  const normal = normalizeRecipe(doc as Recipe);
  if (normal.problems.length > 0) throw new RecipeInputError(`${file}: invalid recipe`, normal.problems);
  return normal.recipe;
}

export function discoverRecipes(projectRoot: string): Discovery {
  const recipes: FoundRecipe[] = [];
  const broken: RecipeProblem[] = [];
  const names = new Set<string>();
  for (const { dir, scope } of recipeDirs(projectRoot)) {
    if (!isDir(dir)) continue;
    const found: FoundRecipe[] = [];
    for (const entry of readdirSync(dir).sort()) {
      if (!isRecipeFile(entry)) continue;
      const file = join(dir, entry);
      try {
        found.push({ recipe: readRecipeFile(file), file, scope });
      } catch (error) {
        const e = error as RecipeInputError;
        broken.push({ file, scope, problems: e.problems?.length ? e.problems : [e.message] });
      }
    }
    for (const one of found) {
      const same = found.filter((f) => f.recipe.name === one.recipe.name);
      if (same.length > 1) {
        const others = same.filter((f) => f !== one).map((f) => f.file);
        broken.push({ file: one.file, scope, problems: [`name: "${one.recipe.name}" is also the name of ${others.join(' and ')}; names must be unique (rename or remove one)`] });
        names.add(one.recipe.name); // a user recipe of that name does not stand in for the project's
        continue;
      }
      if (names.has(one.recipe.name)) continue; // shadowed by the project recipe
      names.add(one.recipe.name);
      recipes.push(one);
    }
  }
  return { recipes, broken };
}

/** Finds one recipe by name; a broken file of that name is an error, not a fallback. */
export function findRecipe(projectRoot: string, name: string): FoundRecipe {
  const { recipes, broken } = discoverRecipes(projectRoot);
  const found = recipes.find((r) => r.recipe.name === name);
  const brokenNamed = broken.filter((b) => recipeFileBase(b.file) === name || b.problems.some((p) => p.startsWith(`name: "${name}" is also the name of`)));
  if (brokenNamed.length > 0 && (!found || brokenNamed.some((b) => b.scope === 'project' || b.scope === found.scope))) {
    const b = brokenNamed[0]!;
    throw new RecipeInputError(`${b.file}: invalid recipe`, b.problems);
  }
  if (found) return found;
  const where = recipeDirs(projectRoot)
    .map((d) => d.dir)
    .join(' and ');
  const known = recipes.map((r) => r.recipe.name);
  throw new RecipeInputError(
    `no recipe named "${name}" in ${where}${known.length ? `; known recipes: ${known.join(', ')}` : ''}${
      broken.length ? `; ${broken.length} recipe file(s) are invalid (see "vigil recipe list")` : ''
    }`,
  );
}
