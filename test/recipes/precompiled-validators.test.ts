// The build writes each recipe type's schema (and vigil.yml's) as validator
// code beside it, which the built CLI loads instead of compiling at every
// start. Those validators must say what compiling the schema says: the same
// verdict and the same errors, on the shipped examples and on broken copies.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newAjv } from '../../src/json/compile-schema.ts';
import { compile, recipeSchemaFiles, standaloneSchemaFiles } from '../../src/recipes/loading/recipe-schema.ts';
import { repoRoot } from '../sdk/helpers.ts';

const require = createRequire(import.meta.url);
const built = (schemaFile: string) => join(repoRoot, 'dist', relative(join(repoRoot, 'src'), schemaFile).replace(/\.json$/, '.validate.cjs'));

const examples = readdirSync(join(repoRoot, 'examples/.vigil/recipes')).map((f) => JSON.parse(readFileSync(join(repoRoot, 'examples/.vigil/recipes', f), 'utf8')));
/** Each example, and copies broken the ways users break them. */
const documents = examples.flatMap((doc) => [
  doc,
  { ...doc, unknown_field: true },
  { ...doc, name: 42 },
  { ...doc, steps: [{ label: 'x', bogus: 1 }] },
  { type: doc.type },
]);

describe('validators compiled by the build', () => {
  const withCommon = recipeSchemaFiles().map((f) => [relative(repoRoot, f), f, () => compile(f)] as const);
  const alone = [join(repoRoot, 'src/workspace/workspace.schema.json'), ...standaloneSchemaFiles()].map(
    (f) => [relative(repoRoot, f), f, () => newAjv().compile(require(f))] as const,
  );
  it.each([...withCommon, ...alone])('%s agrees with compiling it', (_, schemaFile, compileIt) => {
    expect(existsSync(built(schemaFile)), `${built(schemaFile)} is missing: run npm run build`).toBe(true);
    const fromBuild = require(built(schemaFile));
    const compiled = compileIt();
    for (const doc of documents) {
      expect(fromBuild(doc), `${JSON.stringify(doc)} (is dist/ older than src/? npm run build)`).toBe(compiled(doc));
      expect(fromBuild.errors ?? null).toEqual(compiled.errors ?? null);
    }
  });
});
