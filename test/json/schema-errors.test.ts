// What a refused file says about its property names: one line naming the name and the rule it broke.
import { expect, it } from 'vitest';
import { newAjv } from '../../src/json/compile-schema.ts';
import { describeSchemaErrors } from '../../src/json/schema-errors.ts';

const said = (schema: object, doc: unknown): string[] => {
  const validate = newAjv().compile(schema);
  expect(validate(doc)).toBe(false);
  return describeSchemaErrors(validate.errors, doc);
};

it('says a property name that breaks its pattern or length once, naming it and the rule in words', () => {
  const caps = { type: 'object', properties: { concurrency: { type: 'object', propertyNames: { pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$', maxLength: 10 } } } };
  expect(said(caps, { concurrency: { 'much-too-long-name': 1 } })).toEqual([
    'concurrency: property name "much-too-long-name" is not allowed (names are letters, digits, _, . and -, starting with a letter or digit, at most 10 characters)',
  ]);
  const vars = { type: 'object', properties: { env: { type: 'object', propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' } } } };
  expect(said(vars, { env: { '9x': '1' } })).toEqual(['env: property name "9x" is not allowed (names are letters, digits and _, not starting with a digit)']);
  // A pattern without words of its own is shown as it is.
  expect(said({ type: 'object', propertyNames: { pattern: '^x' } }, { y: 1 })).toEqual(['(top level): property name "y" is not allowed (names must match ^x)']);
});
