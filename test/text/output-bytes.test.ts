// What a program printed: at most so many bytes, its characters whole.
import { describe, expect, it } from 'vitest';
import { OutputBytes } from '../../src/text/output-bytes.ts';

describe('OutputBytes', () => {
  it('keeps a character whose bytes came in two reads whole', () => {
    const out = new OutputBytes(1024);
    const bytes = Buffer.from('naïve 日本');
    out.add(bytes.subarray(0, 3));
    out.add(bytes.subarray(3, 8));
    out.add(bytes.subarray(8));
    expect(out.text()).toBe('naïve 日本');
  });

  it('keeps no more than its limit, however much comes', () => {
    const out = new OutputBytes(10);
    for (let i = 0; i < 1000; i += 1) out.add(Buffer.from('0123456'));
    expect(out.text()).toBe('0123456012');
  });
});
