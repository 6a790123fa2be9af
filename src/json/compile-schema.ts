// Compiles a JSON Schema with ajv on first use. Loading and compiling ajv
// costs a few hundred milliseconds, which every `vigil` command would pay at
// start if it happened at import time (the CLI imports all command groups).
// A build (scripts/build.mjs) also writes each schema's validator as code,
// `<schema>.validate.cjs` beside it: a command of the built CLI loads that in
// a few milliseconds instead of compiling (100-300 ms for a recipe type).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Ajv as AjvType, ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);

/** The options every compiled validator of a recipe or workspace file uses (the build's too). */
export const validatorOptions = { allErrors: true, strict: false, verbose: true } as const;

/** Where the build puts the validator of `schemaFile`. */
export function precompiledPath(schemaFile: string): string {
  return schemaFile.replace(/\.json$/, '.validate.cjs');
}

/** The validator the build wrote for `schemaFile`, when there is one (not when running from sources). */
export function precompiled<T>(schemaFile: string): ValidateFunction<T> | undefined {
  const path = precompiledPath(schemaFile);
  return existsSync(path) ? (require(path) as ValidateFunction<T>) : undefined;
}

/** An ajv instance with the options above, loaded on first use. */
export function newAjv(): AjvType {
  const { Ajv } = require('ajv') as typeof import('ajv');
  return new Ajv(validatorOptions);
}

export function lazyValidator<T>(schemaPath: string): () => ValidateFunction<T> {
  let validate: ValidateFunction<T> | null = null;
  return () => {
    validate ??= precompiled<T>(schemaPath) ?? newAjv().compile<T>(require(schemaPath) as object);
    return validate;
  };
}
