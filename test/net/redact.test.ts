// The one redaction of credentials in URLs (src/net/redact.ts), used by the
// inspector, the dashboard, served monitors, the admin snapshot and logs.
import { describe, expect, it } from 'vitest';
import { redactCredentials, redactDeep } from '../../src/net/redact.ts';

describe('redactCredentials', () => {
  it.each([
    ['http://user:pa55@host.example/x?api_key=K1&region=eu', 'http://***@host.example/x?api_key=***&region=eu'],
    ['https://host.example/feed?token=abc&key=def&secret=s&password=p&page=2', 'https://host.example/feed?token=***&key=***&secret=***&password=***&page=2'],
    ['wss://alice@stream.example/socket', 'wss://***@stream.example/socket'],
    ['postgres://vigil:hunter2@db:5432/vigil', 'postgres://***@db:5432/vigil'],
    ['http://h/?access_token=1&X-Api-Key=2&sig=3&monkey=4&bypass=5', 'http://h/?access_token=***&X-Api-Key=***&sig=***&monkey=4&bypass=5'],
    ['http://h/?api%5Fkey=1#frag', 'http://h/?api%5Fkey=***#frag'],
    ['http://u:p@ss@h/path', 'http://***@h/path'],
    ['http://h/a@b', 'http://h/a@b'],
    ['no url here', 'no url here'],
  ])('%s', (given, shown) => {
    expect(redactCredentials(given)).toBe(shown);
  });

  it('redacts every URL inside a text, and every string inside a value', () => {
    expect(redactCredentials('fetch http://a:b@x/?token=t failed; retry https://y/?key=k soon')).toBe('fetch http://***@x/?token=*** failed; retry https://y/?key=*** soon');
    expect(redactDeep({ kind: 'http', url: 'http://a:b@x/', list: ['http://x/?secret=s'], n: 3, __proto__x: null })).toEqual({
      kind: 'http',
      url: 'http://***@x/',
      list: ['http://x/?secret=***'],
      n: 3,
      __proto__x: null,
    });
  });
});
