// A recipe file's text as a document: `.json` parsed as JSON, `.yml` and
// `.yaml` as YAML (1.2 core schema: `on`, `yes` and dates stay text), both
// with a syntax error at its line and column. What comes out is checked by
// the same schema either way.
import { createRequire } from 'node:module';
import { parseJson } from '../../json/parse-json.ts';

const require = createRequire(import.meta.url);

/** The endings a recipe file may have, the first being the one `vigil init` writes unless --yaml. */
export const RECIPE_EXTENSIONS = ['.json', '.yml', '.yaml'] as const;

export function isRecipeFile(path: string): boolean {
  return RECIPE_EXTENSIONS.some((ext) => path.endsWith(ext));
}

/** `hello.yml` → `hello`. */
export function recipeFileBase(path: string): string {
  const name = path.split('/').pop()!;
  const ext = RECIPE_EXTENSIONS.find((e) => name.endsWith(e));
  return ext ? name.slice(0, -ext.length) : name;
}

function isYaml(path: string): boolean {
  return path.endsWith('.yml') || path.endsWith('.yaml');
}

/** Parses the text of `file`; throws "not valid JSON: line L, column C: …" or "not valid YAML: line L, column C: …". */
export function parseRecipeText(file: string, text: string): unknown {
  if (!isYaml(file)) {
    try {
      return parseJson(text);
    } catch (error) {
      throw new Error(`not valid JSON: ${(error as Error).message}`);
    }
  }
  const { parseAllDocuments } = require('yaml') as typeof import('yaml');
  const docs = parseAllDocuments(text, { uniqueKeys: true, logLevel: 'silent' });
  if (!Array.isArray(docs)) return null; // no document at all: an empty file
  const doc = docs[0];
  if (!doc) return null;
  const first = doc.errors[0] ?? docs[1]?.errors[0];
  if (!first && docs.length > 1) {
    const line = text.slice(0, docs[1]!.range[0]).split('\n').length;
    throw new Error(`not valid YAML: line ${line}: a second document; a recipe file holds one`);
  }
  if (first) {
    const at = first.linePos?.[0];
    const what = first.message.replace(/ at line \d+, column \d+:?[\s\S]*$/, '');
    throw new Error(`not valid YAML: ${at ? `line ${at.line}, column ${at.col}: ` : ''}${what}`);
  }
  try {
    return doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (error) {
    throw new Error(`not valid YAML: ${(error as Error).message}`);
  }
}
