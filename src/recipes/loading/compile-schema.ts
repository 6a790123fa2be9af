// Compiles a JSON Schema with ajv on first use. Loading and compiling ajv
// costs a few hundred milliseconds, which every `vigil` command would pay at
// start if it happened at import time (the CLI imports all command groups).
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);

export function lazyValidator<T>(schemaPath: string): () => ValidateFunction<T> {
  let validate: ValidateFunction<T> | null = null;
  return () => {
    if (!validate) {
      const { Ajv } = require('ajv') as typeof import('ajv');
      validate = new Ajv({ allErrors: true, strict: false, verbose: true }).compile<T>(require(schemaPath) as object);
    }
    return validate;
  };
}
