// Runs the test files that took longest in a recorded run first, so that the
// run does not end with one slow file working alone while the other worker
// idles. The record (test/support/durations.json, seconds per file) is
// rewritten by `npm run test:durations`; a file it does not know runs first,
// since it may be slow.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const recorded: Record<string, number> = JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8'));

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (file: TestSpecification) => recorded[relative(file.project.config.root, file.moduleId)] ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => seconds(b) - seconds(a));
  }
}
