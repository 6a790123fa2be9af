// The output of a run (recipes-and-sdk.md §0): the final output of its last
// succeeded step, or what a composite type makes of its children; kept as
// output.txt in the run folder.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunJson } from '../records/run-record.ts';

export function lastStepOutput(run: RunJson, dir: string): string {
  const done = run.steps.filter((s) => s.status === 'succeeded' && s.ended).sort((a, b) => (a.ended! < b.ended! ? -1 : a.ended! > b.ended! ? 1 : 0));
  const last = done.at(-1);
  if (!last) return '';
  if (last.output_file) {
    const file = join(dir, last.output_file);
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }
  return last.output ?? '';
}

/** Writes output.txt; returns its absolute path. */
export function writeOutput(dir: string, text: string): string {
  const file = join(dir, 'output.txt');
  writeFileSync(file, text);
  return file;
}
