// What of a run's output is held in memory and handed on, and what output.txt keeps: every byte.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HELD_OUTPUT_BYTES, readHeldOutput, writeOutput } from '../../src/recipes/tree/output.ts';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('held output', () => {
  it('holds an output up to the limit whole, from where the last attempt starts', () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-held-'));
    const log = join(dir, 'step.log');
    writeFileSync(log, 'attempt 1\n--- attempt 2 of 2 ---\nanswer: 42\n');
    expect(readHeldOutput(log, Buffer.byteLength('attempt 1\n--- attempt 2 of 2 ---\n'))).toEqual({ text: 'answer: 42\n' });
    expect(readHeldOutput(join(dir, 'missing.log'))).toEqual({ text: '' });
  });

  it('holds only the end of a longer one, starting at a whole character, and output.txt gets all of it', () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-held-'));
    const log = join(dir, 'step.log');
    // 'é' is two bytes: the held part starts one byte into one of them.
    const bytes = Buffer.from(`head\n${'é'.repeat(HELD_OUTPUT_BYTES / 2)}\nthe end\n`);
    writeFileSync(log, bytes);
    const held = readHeldOutput(log);
    expect(held.whole).toEqual({ file: log, from: 0 });
    expect(held.text.endsWith('é\nthe end\n')).toBe(true);
    expect(held.text.startsWith('é')).toBe(true);
    expect(Buffer.byteLength(held.text)).toBe(HELD_OUTPUT_BYTES - 1);
    const written = writeOutput(dir, held);
    expect(readFileSync(written).equals(bytes)).toBe(true);
  });
});
