// What later steps may read of an earlier one (`if:` conditions and
// `${steps.<label>.output}` / `.json.<field>`): its status, the last
// OUTPUT_LIMIT bytes of its output, and its structured output when it has one.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { StepRecord } from '../records/run-record.ts';

/** Bytes of a step's output another step can read: its tail, so a long log cannot swell a prompt. */
export const OUTPUT_LIMIT = 16 * 1024;

export interface StepView {
  status: string;
  output: string;
  json: unknown;
}

/** The part of a step's output its last attempt wrote (`offset`: where in bytes it starts; every attempt stays in the log). */
export function lastAttempt(output: string, offset: number | undefined): string {
  return offset ? Buffer.from(output).subarray(offset).toString('utf8') : output;
}

/** The last `limit` bytes of a file, from `from` on at most. */
export function readTail(path: string, limit = OUTPUT_LIMIT, from = 0): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '';
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.max(0, Math.min(size - from, limit));
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, size - length);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export function stepView(runDir: string, record: StepRecord): StepView {
  const output = record.output_file ? readTail(join(runDir, record.output_file), OUTPUT_LIMIT, record.attempt_offset) : lastAttempt(record.output ?? '', record.attempt_offset).slice(-OUTPUT_LIMIT);
  return { status: record.status, output: output.trimEnd(), json: record.json ?? null };
}
