// The reply encoder splices stored JSON text in as it is, and bearer tokens are
// compared through a cache of digests: both are on every request's path.
import { describe, expect, it } from 'vitest';
import { RawJson, stringifyReply, toPlain } from '../../src/protocol/raw-json.ts';
import { hashToken, mintToken, secretMatches, tokenMatches } from '../../src/service/tokens.ts';

describe('stringifyReply', () => {
  it('embeds RawJson text at any depth, in order, and leaves other values to JSON.stringify', () => {
    const reply = {
      observation: new RawJson('{"id":"1","data":{"n":1}}'),
      pages: [new RawJson('[1,2]'), { inner: new RawJson('"x"') }],
      when: new Date(0),
      text: 'plain "quoted" \u0000raw:9 text',
    };
    const text = stringifyReply(reply);
    expect(JSON.parse(text)).toEqual({
      observation: { id: '1', data: { n: 1 } },
      pages: [[1, 2], { inner: 'x' }],
      when: '1970-01-01T00:00:00.000Z',
      text: 'plain "quoted" \u0000raw:9 text',
    });
    expect(toPlain({ a: new RawJson('{"b":true}') })).toEqual({ a: { b: true } });
  });

  it('gives the same text as JSON.stringify when there is nothing raw', () => {
    const value = { a: [1, 'two', null, { c: false }], d: undefined, e: 'é\n' };
    expect(stringifyReply(value)).toBe(JSON.stringify(value));
    expect(stringifyReply(undefined)).toBe(undefined);
  });

  it('a plain JSON.stringify outside a reply shows a RawJson as its text field', () => {
    expect(JSON.stringify({ r: new RawJson('{"x":1}') })).toBe('{"r":{"text":"{\\"x\\":1}"}}');
    expect(stringifyReply({ r: new RawJson('{"x":1}') })).toBe('{"r":{"x":1}}');
  });
});

describe('token comparison', () => {
  it('matches only the token whose hash is stored, however often either is presented', () => {
    const { token, hash } = mintToken('owner');
    const other = mintToken('owner');
    for (let i = 0; i < 3; i++) {
      expect(tokenMatches(token, hash)).toBe(true);
      expect(tokenMatches(other.token, hash)).toBe(false);
      expect(tokenMatches(token, other.hash)).toBe(false);
    }
    expect(tokenMatches(undefined, hash)).toBe(false);
    expect(tokenMatches('', hash)).toBe(false);
    expect(tokenMatches(token, null)).toBe(false);
    expect(hashToken(token)).toBe(hash);
  });

  it('stays correct past the cache bound (a flood of distinct tokens evicts, never confuses)', () => {
    const { token, hash } = mintToken('subscription');
    expect(tokenMatches(token, hash)).toBe(true);
    for (let i = 0; i < 5000; i++) expect(tokenMatches(`vgs_flood${i}`, hash)).toBe(false);
    expect(tokenMatches(token, hash)).toBe(true);
  });

  it('compares clear secrets', () => {
    expect(secretMatches('admin-secret', 'admin-secret')).toBe(true);
    expect(secretMatches('admin-secreT', 'admin-secret')).toBe(false);
    expect(secretMatches(undefined, 'admin-secret')).toBe(false);
    expect(secretMatches('', 'admin-secret')).toBe(false);
  });
});
