// Where a type's schema file is: src/recipes/types/<type>/schema.json (also in dist/).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function typeSchemaFile(type: string): string {
  return require.resolve(`./${type}/schema.json`);
}

export const commonSchemaFile: string = require.resolve('./common.schema.json');
