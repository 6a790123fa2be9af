// JSON Schema validation of every request body, with the protocol's own
// keywords (keywords.ts). ajv's errors become one ProtocolError naming the
// field. A build writes the validators as code (scripts/build.mjs), which a
// server loads instead of compiling them at its first requests.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { ProtocolError, invalid } from './errors.ts';
import { protocolKeywords } from './keywords.ts';
import { type VocabularyName, vocabularies } from './vocabulary.ts';
import { describe, maxNesting, pathBeyondNesting } from './wire-values.ts';

const schemaDir = join(dirname(fileURLToPath(import.meta.url)), 'schemas');

/** Where the build writes every request schema's validator, as code (one CommonJS module, by schema id). */
export const precompiledValidators = join(schemaDir, 'requests.validate.cjs');

export type SchemaId =
  | 'ack'
  | 'compact'
  | 'empty'
  | 'lease-claim'
  | 'lease-complete'
  | 'lease-release'
  | 'lease-renew'
  | 'monitor-configure'
  | 'monitor-create'
  | 'monitor-ref'
  | 'observation'
  | 'publish-batch'
  | 'publish-target'
  | 'pull'
  | 'seek'
  | 'subscribe'
  | 'subscription-ref';

type Parent = Record<string | number, unknown>;

/**
 * The protocol's schemas with its keywords. They are fixed, so a server does not check them against the
 * JSON Schema meta-schema (`validateSchemas`): compiling the meta-schema cost every server 60-70 ms of CPU
 * at its first request; test/protocol/schemas.test.ts checks them once. `source` keeps the generated code,
 * for the build to write.
 */
export function protocolAjv(options: { validateSchemas: boolean; source?: boolean }): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    allowUnionTypes: true,
    verbose: true,
    validateSchema: options.validateSchemas,
    ...(options.source ? { code: { source: true } } : {}),
  });
  for (const keyword of protocolKeywords) ajv.addKeyword(keyword);
  for (const file of readdirSync(schemaDir).filter((f) => f.endsWith('.json'))) {
    ajv.addSchema(JSON.parse(readFileSync(join(schemaDir, file), 'utf8')));
  }
  return ajv;
}

// Loaded or built on the first request, not at import: every CLI command loads this module, few validate.
// Compiling them cost a server about 100 ms of CPU over its first requests; loading the build's code, a few.
let ajv: Ajv | undefined;
let written: Partial<Record<SchemaId, ValidateFunction>> | null | undefined;
const compiled = new Map<SchemaId, ValidateFunction>();

function validatorFor(id: SchemaId): ValidateFunction {
  let validate = compiled.get(id);
  if (!validate) {
    if (written === undefined) written = existsSync(precompiledValidators) ? createRequire(import.meta.url)(precompiledValidators) : null;
    validate = written?.[id];
    if (!validate) {
      ajv ??= protocolAjv({ validateSchemas: false });
      validate = ajv.getSchema(id);
    }
    if (!validate) throw new Error(`no schema "${id}" in ${schemaDir}`);
    compiled.set(id, validate);
  }
  return validate;
}

/** Validates (and normalises in place) `input`; throws the protocol's error otherwise. */
export function validate<T>(id: SchemaId, input: unknown): T {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalid(`The request body must be a JSON object; got ${describe(input)}.`);
  }
  const tooDeep = pathBeyondNesting(input);
  if (tooDeep) {
    const field = tooDeep[0] ?? '(body)';
    throw invalid(`"${field}" is nested more than ${maxNesting} levels deep (the limit is ${maxNesting} levels); flatten it.`, { field, limit: maxNesting });
  }
  const check = validatorFor(id);
  if (check(input)) return input as T;
  throw toProtocolError(check.errors ?? [], input);
}

function fieldName(error: ErrorObject): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') path.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') path.push(String(error.params.additionalProperty));
  return path.join('.') || '(body)';
}

function valueAt(root: unknown, instancePath: string): unknown {
  let node: unknown = root;
  for (const part of instancePath.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Parent)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

function allowedText(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties': {
      const parent = error.parentSchema as { properties?: Record<string, unknown> } | undefined;
      const allowed = parent?.properties ? Object.keys(parent.properties).join(', ') : '';
      return `is not a known field${allowed ? ` (allowed: ${allowed})` : ''}`;
    }
    case 'type':
      return `must be of type ${String(p.type).replaceAll(',', ' or ')}`;
    case 'wholeNumber': {
      const range = p.max === Number.MAX_SAFE_INTEGER ? `of at least ${p.min}` : `from ${p.min} to ${p.max}`;
      return `must be a whole number ${range} (a JSON integer or a string of 1-15 digits)`;
    }
    case 'timestamp':
      return 'must be an ISO-8601 timestamp such as 2026-11-21T10:00:00.000Z';
    case 'pattern':
      return p.pattern === '\\S' ? 'must contain some text' : `must match ${String(p.pattern)}`;
    case 'minLength':
      return Number(p.limit) === 1 ? 'must not be empty' : `must be at least ${p.limit} characters`;
    case 'maxLength':
      return `must be at most ${p.limit} characters`;
    case 'minimum':
      return `must be at least ${p.limit}`;
    case 'maxItems':
      return `must have at most ${p.limit} items`;
    case 'minItems':
      return `must have at least ${p.limit} item${Number(p.limit) === 1 ? '' : 's'}`;
    case 'maxProperties':
      return `must have at most ${p.limit} keys`;
    case 'uniqueItems':
      return 'must not repeat an item';
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'anyOf':
      return 'has a value of the wrong kind';
    default:
      return error.message ?? 'is not allowed';
  }
}

function toProtocolError(errors: ErrorObject[], input: unknown): ProtocolError {
  const vocabularyErrors = errors.filter((e) => e.keyword === 'vocabulary');
  if (vocabularyErrors.length > 0) {
    const invalidValues: string[] = [];
    const known: Record<string, readonly string[]> = {};
    for (const e of vocabularyErrors) {
      const name = (e.params as { vocabulary: VocabularyName }).vocabulary;
      const value = valueAt(input, e.instancePath);
      invalidValues.push(`${fieldName(e)}:${typeof value === 'string' ? value : JSON.stringify(value)}`);
      known[name] = vocabularies[name];
    }
    const unique = [...new Set(invalidValues)];
    return new ProtocolError(
      'UNKNOWN_VOCABULARY',
      `Value outside its vocabulary: ${unique.join(', ')}. Allowed: ${Object.entries(known)
        .map(([k, v]) => `${k} ∈ {${v.join(', ')}}`)
        .join('; ')}.`,
      { invalid: unique, known },
    );
  }
  // anyOf reports its branches' errors too; the most specific one is more useful.
  const mixed = errors.find((e) => e.keyword === 'anyOf' && e.instancePath === '/from');
  if (mixed) return invalid(`"from" must be "head", "earliest" or a whole number; got ${describe(valueAt(input, '/from'))}.`, { field: 'from' });
  const specific = errors.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'allOf');
  const chosen = specific.find((e) => e.keyword !== 'type') ?? specific[0] ?? errors[0];
  if (!chosen) return invalid('The request is malformed.');
  const field = fieldName(chosen);
  const got = chosen.keyword === 'required' || chosen.keyword === 'additionalProperties' ? '' : `; got ${describe(valueAt(input, chosen.instancePath))}`;
  return invalid(`"${field}" ${allowedText(chosen)}${got}.`, {
    field,
  });
}
