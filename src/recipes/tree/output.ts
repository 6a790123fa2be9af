// The output of a run (recipes-and-sdk.md §0): the final output of its last
// succeeded step, or what a composite type makes of its children; kept as
// output.txt in the run folder.
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { redactCredentials } from '../../net/redact.ts';
import type { RunJson, StepRecord } from '../records/run-record.ts';

const tailLines = 20;
const tailBytes = 2048;

/** The last bytes of a file, without reading the rest of it. */
function fileTail(file: string, bytes: number): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(bytes, size));
    readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    return buffer.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * The last lines of a step's output (at most 20 lines and 2 KiB, URL
 * credentials redacted), what a run tells the server of a finished step so
 * that the dashboard can show it; null when the step wrote nothing.
 */
export function stepLogTail(step: StepRecord, dir: string): string | null {
  let text = step.output ?? '';
  if (step.output_file) {
    const file = join(dir, step.output_file);
    text = existsSync(file) ? fileTail(file, tailBytes * 2) : '';
  }
  const lines = text.trimEnd().split('\n').slice(-tailLines).join('\n');
  const tail = lines.length > tailBytes ? lines.slice(-tailBytes) : lines;
  return tail.length > 0 ? redactCredentials(tail) : null;
}

export function lastStepOutput(run: RunJson, dir: string): string {
  const done = run.steps.filter((s) => s.status === 'succeeded' && s.ended).sort((a, b) => (a.ended! < b.ended! ? -1 : a.ended! > b.ended! ? 1 : 0));
  const last = done.at(-1);
  if (!last) return '';
  // A retried step's output is its last attempt's (every attempt stays in its log).
  const from = last.attempt_offset ?? 0;
  if (last.output_file) {
    const file = join(dir, last.output_file);
    return existsSync(file) ? readFileSync(file).subarray(from).toString('utf8') : '';
  }
  return Buffer.from(last.output ?? '').subarray(from).toString('utf8');
}

/** Writes output.txt; returns its absolute path. */
export function writeOutput(dir: string, text: string): string {
  const file = join(dir, 'output.txt');
  writeFileSync(file, text);
  return file;
}
