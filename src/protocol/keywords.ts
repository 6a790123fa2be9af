// The protocol's own JSON Schema keywords, as ajv code keywords: `vocabulary`
// (closed values), `wholeNumber` (integers that may arrive as digit strings;
// coerced in place) and `timestamp` (normalised in place). They generate code
// rather than call a function, so that the build can write the validators as
// code (ajv's standalone mode cannot write a keyword that calls a function):
// a server then loads them instead of compiling them at its first requests.
// The code does what readWholeNumber and readTimestamp (wire-values.ts) do,
// with their patterns.
import { _, type Code, type CodeKeywordDefinition, type KeywordCxt, type Name, stringify } from 'ajv';
import { type VocabularyName, vocabularies } from './vocabulary.ts';
import { digits, timestampShape } from './wire-values.ts';

/** A pattern as a value of the generated code (written as `new RegExp(…)` in standalone code). */
function pattern(cxt: KeywordCxt, rx: RegExp): Name {
  return cxt.gen.scopeValue('pattern', { key: `wire:${rx.source}/${rx.flags}`, ref: rx, code: _`new RegExp(${rx.source}, ${rx.flags})` });
}

/**
 * `valid` decides; when it holds, `normalised` replaces the value in its parent (and in the data the
 * schema's other keywords check), as a modifying keyword does.
 */
function checkAndReplace(cxt: KeywordCxt, valid: Code, normalised: Code): void {
  const { gen, data, it } = cxt;
  gen.if(valid);
  const value = gen.const('normalised', normalised);
  gen.if(it.parentData, () => gen.assign(_`${it.parentData}[${it.parentDataProperty}]`, value));
  gen.assign(data, value);
  gen.else();
  cxt.error();
  gen.endIf();
}

const vocabulary: CodeKeywordDefinition = {
  keyword: 'vocabulary',
  schemaType: 'string',
  error: { message: 'outside its vocabulary', params: ({ schema }) => _`{vocabulary: ${schema}}` },
  code(cxt) {
    const list = vocabularies[cxt.schema as VocabularyName];
    if (!list) throw new Error(`no vocabulary "${cxt.schema}"`);
    const allowed = cxt.gen.scopeValue('obj', { key: `vocabulary:${cxt.schema}`, ref: list, code: stringify(list) });
    cxt.fail(_`!(typeof ${cxt.data} == "string" && ${allowed}.includes(${cxt.data}))`);
  },
};

const wholeNumber: CodeKeywordDefinition = {
  keyword: 'wholeNumber',
  schemaType: 'object',
  error: {
    message: 'not a whole number in range',
    params: ({ schema }) => _`{min: ${(schema as Range).min ?? 0}, max: ${(schema as Range).max ?? Number.MAX_SAFE_INTEGER}}`,
  },
  code(cxt) {
    const { gen, data } = cxt;
    const { min = 0, max = Number.MAX_SAFE_INTEGER } = cxt.schema as Range;
    const asString = pattern(cxt, digits);
    const n = gen.const(
      'whole',
      _`typeof ${data} == "number" ? (Number.isSafeInteger(${data}) && ${data} >= 0 ? ${data} : undefined) : typeof ${data} == "string" && ${asString}.test(${data}) ? Number(${data}) : undefined`,
    );
    checkAndReplace(cxt, _`${n} !== undefined && ${n} >= ${min} && ${n} <= ${max}`, _`${n}`);
  },
};

const timestamp: CodeKeywordDefinition = {
  keyword: 'timestamp',
  schemaType: 'boolean',
  error: { message: 'not an ISO-8601 timestamp', params: () => _`{}` },
  code(cxt) {
    const { gen, data } = cxt;
    const shape = pattern(cxt, timestampShape);
    const ms = gen.const('ms', _`typeof ${data} == "string" && ${data}.length <= 64 && ${shape}.test(${data}) ? Date.parse(${data}) : NaN`);
    checkAndReplace(cxt, _`!Number.isNaN(${ms})`, _`new Date(${ms}).toISOString()`);
  },
};

interface Range {
  min?: number;
  max?: number;
}

export const protocolKeywords: readonly CodeKeywordDefinition[] = [vocabulary, wholeNumber, timestamp];
