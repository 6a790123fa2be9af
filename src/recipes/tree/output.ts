// The output of a run (recipes-and-sdk.md §0): the final output of its last
// succeeded step, or what a composite type makes of its children; kept as
// output.txt in the run folder.
import { closeSync, copyFileSync, existsSync, fstatSync, mkdirSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { redactCredentials } from '../../net/redact.ts';
import { confined } from '../../workspace/confine.ts';
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

/**
 * The most of an output held in memory and handed on (to a parent's verdict or score, a pipeline's next entry,
 * sdk.sequence.run, cir capture): its last 16 MB. An agent that printed more (a whole build log) once took
 * the runner to twice its size in memory, and past 512 MB to a crash ("Cannot create a string longer than
 * …") after the step had succeeded; output.txt and the step's log keep every byte.
 */
export const HELD_OUTPUT_BYTES = 16 * 1024 * 1024;

/** Where an output longer than what is held is, whole: bytes `from` to the end of `file`. */
export interface OutputSource {
  file: string;
  from: number;
}

/** What a run's output is: its text (the last HELD_OUTPUT_BYTES when longer) and, when that is only its end, the whole of it. */
export interface RunOutput {
  text: string;
  whole?: OutputSource;
}

/** The text of `file` from byte `from` on, or only its last HELD_OUTPUT_BYTES (a character cut at their start dropped); '' when there is no file. */
export function readHeldOutput(file: string, from = 0): RunOutput {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return { text: '' };
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(from, size - HELD_OUTPUT_BYTES);
    const buffer = Buffer.alloc(Math.max(0, size - start));
    readSync(fd, buffer, 0, buffer.length, start);
    if (start === from) return { text: buffer.toString('utf8') };
    let cut = 0;
    // UTF-8 continuation bytes (10xxxxxx) left of the first whole character.
    while (cut < 3 && cut < buffer.length && (buffer[cut]! & 0xc0) === 0x80) cut += 1;
    return { text: buffer.subarray(cut).toString('utf8'), whole: { file, from } };
  } finally {
    closeSync(fd);
  }
}

/**
 * What a step reused by --resume brings of its earlier run into the new run's record: its output
 * (the log copied into the new run's folder) and when it ended, so that a run whose last step was
 * reused has that step's output as its own (it had none: a resumed child's judge gave no verdict).
 */
export function reusedStepOutput(earlier: StepRecord | undefined, earlierDir: string, dir: string): Partial<StepRecord> {
  if (!earlier?.ended) return {};
  const kept = { ended: earlier.ended, ...(earlier.attempt_offset !== undefined && { attempt_offset: earlier.attempt_offset }) };
  if (!earlier.output_file) return earlier.output !== undefined ? { ...kept, output: earlier.output } : kept;
  // Confined: the earlier run's record is read from disk.
  const from = confined(earlierDir, earlier.output_file, 'output_file', 'the run folder');
  if (!existsSync(from)) return kept;
  const to = confined(dir, earlier.output_file, 'output_file', 'the run folder');
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
  return { ...kept, output_file: earlier.output_file, ...(earlier.output_bytes !== undefined && { output_bytes: earlier.output_bytes }) };
}

export function lastStepOutput(run: RunJson, dir: string): RunOutput {
  const done = run.steps.filter((s) => (s.status === 'succeeded' || s.status === 'reused') && s.ended).sort((a, b) => (a.ended! < b.ended! ? -1 : a.ended! > b.ended! ? 1 : 0));
  const last = done.at(-1);
  if (!last) return { text: '' };
  // A retried step's output is its last attempt's (every attempt stays in its log).
  const from = last.attempt_offset ?? 0;
  // Confined: this reads records from disk too (a run whose runner died before it wrote output.txt).
  if (last.output_file) return readHeldOutput(confined(dir, last.output_file, 'output_file', 'the run folder'), from);
  return { text: Buffer.from(last.output ?? '').subarray(from).toString('utf8') };
}

/** Writes output.txt (the whole output, copied from where it is when only its end is held); returns its absolute path. */
export function writeOutput(dir: string, output: RunOutput): string {
  const file = join(dir, 'output.txt');
  if (!output.whole) {
    writeFileSync(file, output.text);
    return file;
  }
  const from = openSync(output.whole.file, 'r');
  const to = openSync(file, 'w');
  try {
    const buffer = Buffer.alloc(1024 * 1024);
    for (let at = output.whole.from; ; ) {
      const n = readSync(from, buffer, 0, buffer.length, at);
      if (n === 0) break;
      writeSync(to, buffer, 0, n);
      at += n;
    }
  } finally {
    closeSync(from);
    closeSync(to);
  }
  return file;
}
