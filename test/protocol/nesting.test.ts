// How deep a request body may nest (wire-values.ts): the first path too deep is
// named, arrays count as levels, and a body at the limit is accepted whole.
import { describe, expect, it } from 'vitest';
import { maxNesting, pathBeyondNesting } from '../../src/protocol/wire-values.ts';

/** `levels` objects, each the only value of the one before. */
const objects = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

describe('request body nesting', () => {
  it(`accepts ${maxNesting} levels and names the path of the first level beyond`, () => {
    expect(pathBeyondNesting(objects(maxNesting))).toBeUndefined();
    expect(pathBeyondNesting(objects(maxNesting + 1))).toEqual(Array(maxNesting).fill('a'));
  });

  it('counts arrays as levels and finds the deep branch among shallow ones', () => {
    const deep = JSON.parse(`{"x":1,"list":[{"ok":true},${'['.repeat(maxNesting)}${']'.repeat(maxNesting)}]}`);
    expect(pathBeyondNesting(deep)).toEqual(['list', '1', ...Array(maxNesting - 2).fill('0')]);
    expect(pathBeyondNesting({ x: [1, 2, { y: 'z' }], s: 'flat' })).toBeUndefined();
    expect(pathBeyondNesting(objects(3), 2)).toEqual(['a', 'a']);
    expect(pathBeyondNesting('text')).toBeUndefined();
  });
});
