// The `sentinel` recipe type: a target run for each matching observation of a
// Vigil monitor by `vigil daemon` (recipes-and-sdk.md §3).
import { createRequire } from 'node:module';
import { lazyValidator } from '../../../json/compile-schema.ts';
import { describeSchemaErrors } from '../../../json/schema-errors.ts';
import type { SentinelRecipe } from '../../types.ts';

export const SENTINEL_DEFAULTS = { concurrency: 1, lease_seconds: 300, debounce: 0, base: 'http://127.0.0.1:8130' };

const require = createRequire(import.meta.url);
export const sentinelSchemaPath: string = require.resolve('./schema.json');
const validator = lazyValidator<SentinelRecipe>(sentinelSchemaPath);

export function checkSentinelRecipe(doc: unknown): string[] {
  const validate = validator();
  if (!validate(doc)) return describeSchemaErrors(validate.errors, doc);
  return [];
}
