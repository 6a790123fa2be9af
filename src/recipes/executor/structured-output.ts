// A step's `output_schema`: checked as a JSON Schema before the run, handed
// to the backend (claude --json-schema, codex --output-schema, the HTTP
// APIs' JSON mode, VIGIL_OUTPUT_SCHEMA for custom programs), and the last
// JSON object of the step's output validated against it with ajv.
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import { jsonObjectsIn } from '../types/text-results.ts';

const require = createRequire(import.meta.url);
let ajv: import('ajv').Ajv | null = null;

/** Compiles the schema; throws with ajv's words when it is not a valid JSON Schema. */
export function compileOutputSchema(schema: object): ValidateFunction {
  if (!ajv) {
    const { Ajv } = require('ajv') as typeof import('ajv');
    ajv = new Ajv({ allErrors: true, strict: false });
  }
  return ajv.compile(schema);
}

/** The structured output of a step, or why there is none that fits. */
export function readStructuredOutput(output: string, schema: object): { json: Record<string, unknown> } | { error: string } {
  const found = jsonObjectsIn(output).at(-1);
  if (!found) return { error: 'output_schema: the output holds no JSON object' };
  const validate = compileOutputSchema(schema);
  if (validate(found)) return { json: found };
  const why = (validate.errors ?? []).map((e) => `${e.instancePath || '(the object)'} ${e.message ?? 'is invalid'}`).join('; ');
  return { error: `output_schema: the output's last JSON object does not match: ${why}` };
}
