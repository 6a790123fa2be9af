// JSON syntax errors a person can act on, and bounded: the place (line, column) for a file of any
// reasonable size, a short quote of the token the parser stopped at, and no second parse of a huge file.
import { expect, it } from 'vitest';
import { JsonSyntaxError, parseJson } from '../../src/json/parse-json.ts';

const failure = (text: string): JsonSyntaxError => {
  try {
    parseJson(text);
  } catch (error) {
    return error as JsonSyntaxError;
  }
  throw new Error('parsed');
};

it('names the line and column, quoting at most 60 characters of a long bad token', () => {
  const e = failure(`{\n  "a": 1,\n  ${'z'.repeat(5000)}\n}`);
  expect(e).toBeInstanceOf(JsonSyntaxError);
  expect([e.line, e.column]).toEqual([3, 3]);
  expect(e.message).toBe(`line 3, column 3: Expected string but found "${'z'.repeat(60)}…"`);
});

it("gives the parser's own short message for a file too large to parse a second time for the place", () => {
  const e = failure('y'.repeat(2 * 1024 * 1024));
  expect(e).toBeInstanceOf(JsonSyntaxError);
  expect(e.line).toBeUndefined();
  expect(e.message.length).toBeLessThan(200);
});
