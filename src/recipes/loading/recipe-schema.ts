// Validates a recipe against the JSON Schema of its `type` (each type has its
// own, src/recipes/types/<type>/schema.json, sharing types/common.schema.json),
// so an unknown field is refused naming its path and the fields that type
// allows. Schemas are compiled with ajv on first use, once per type, or come
// compiled with the build (compile-schema.ts).
import { createRequire } from 'node:module';
import type { Ajv as AjvType, ValidateFunction } from 'ajv';
import { recipeTypeDef, recipeTypeDefs } from '../types/registry.ts';
import { commonSchemaFile } from '../types/schema-path.ts';
import { newAjv, precompiled } from '../../json/compile-schema.ts';
import { describeSchemaErrors } from '../../json/schema-errors.ts';

const require = createRequire(import.meta.url);
/** The umbrella schema for editors: selects the type's schema by `type`. */
export const recipeSchemaPath: string = require.resolve('../recipe.schema.json');

let ajv: AjvType | null = null;
const compiled = new Map<string, ValidateFunction>();

function validatorFor(schemaFile: string): ValidateFunction {
  let v = compiled.get(schemaFile);
  if (!v) {
    v = precompiled(schemaFile) ?? compile(schemaFile);
    compiled.set(schemaFile, v);
  }
  return v;
}

/** Compiles a type's schema with the common one it refers to (scripts/build.mjs writes the same as code). */
export function compile(schemaFile: string, instance: AjvType = sharedAjv()): ValidateFunction {
  const schema = require(schemaFile) as { $id?: string };
  return (schema.$id && instance.getSchema(schema.$id)) || instance.compile(schema);
}

function sharedAjv(): AjvType {
  ajv ??= withCommonSchema(newAjv());
  return ajv;
}

function withCommonSchema(instance: AjvType): AjvType {
  instance.addSchema(require(commonSchemaFile) as object);
  return instance;
}

/** The schema file of each type validated by schema (for the build, which compiles them ahead). */
export function recipeSchemaFiles(): string[] {
  return recipeTypeDefs()
    .filter((d) => !d.validate)
    .map((d) => d.schemaFile);
}

/** The schema file of each type that checks more than its schema: compiled alone (lazyValidator), and by the build ahead. */
export function standaloneSchemaFiles(): string[] {
  return recipeTypeDefs()
    .filter((d) => d.validate)
    .map((d) => d.schemaFile);
}

/** Returns the problems of `doc` as sentences, or [] when it is a valid recipe of its type. */
export function checkRecipeSchema(doc: unknown): string[] {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return ['(top level): a recipe must be an object of fields (JSON {…} or a YAML mapping)'];
  const type = (doc as { type?: unknown }).type;
  const known = recipeTypeDefs().map((d) => d.type);
  if (type !== undefined && (typeof type !== 'string' || !recipeTypeDef(type)))
    return [`type: ${JSON.stringify(type)} is not allowed; allowed: ${known.map((t) => JSON.stringify(t)).join(', ')}`];
  const def = recipeTypeDef(type as string | undefined)!;
  if (def.validate) return def.validate(doc);
  const validate = validatorFor(def.schemaFile);
  if (validate(doc)) return [];
  return describeSchemaErrors(validate.errors, doc);
}
