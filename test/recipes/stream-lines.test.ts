// How an agent's output is split into lines (its JSON events, its USAGE lines): whole characters, and bounded lines.
import { describe, expect, it } from 'vitest';
import { StreamLines } from '../../src/recipes/backends/stream-lines.ts';

function collect(options: ConstructorParameters<typeof StreamLines>[1] = {}): { lines: string[]; overlong: string[]; stream: StreamLines } {
  const lines: string[] = [];
  const overlong: string[] = [];
  const stream = new StreamLines((l) => lines.push(l), { ...options, overlong: (t) => overlong.push(t) });
  return { lines, overlong, stream };
}

describe('StreamLines', () => {
  it('joins a line written over several reads, ends the last line at the end, and skips blank ones', () => {
    const { lines, stream } = collect();
    for (const part of ['{"a":', '1}\r\n\n  \n{"b"', ':2}\n{"c":3}']) stream.push(Buffer.from(part));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    stream.end();
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('keeps a character whose bytes are split between two reads whole', () => {
    const { lines, stream } = collect();
    const bytes = Buffer.from('{"text":"déjà vu — 日本語 🙂"}\n');
    // Every split point, those inside a multi-byte character included.
    for (let at = 1; at < bytes.length; at += 1) {
      stream.push(bytes.subarray(0, at));
      stream.push(bytes.subarray(at));
    }
    expect(new Set(lines)).toEqual(new Set(['{"text":"déjà vu — 日本語 🙂"}']));
    expect(lines).toHaveLength(bytes.length - 1);
  });

  it('passes a line longer than the limit on in pieces as it comes, never as a line, and reads the lines after it', () => {
    const { lines, overlong, stream } = collect({ maxLineChars: 16 });
    stream.push('short\n0123456789');
    expect(overlong).toEqual([]);
    stream.push('abcdefghij');
    stream.push('klm');
    stream.push('\n{"after":true}\n');
    expect(lines).toEqual(['short', '{"after":true}']);
    expect(overlong.join('')).toBe('0123456789abcdefghijklm\n');
    // Held no longer than the limit: what went past it left in pieces, not at the line's end.
    expect(overlong.length).toBeGreaterThan(2);
  });
});
