// `npm run test:durations`: runs the suite with vitest's JSON reporter and
// writes each file's duration (seconds) to test/support/durations.json, the
// order test/support/slowest-first.ts runs the files in.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'vigil-durations-'));
const report = join(scratch, 'report.json');
try {
  try {
    execFileSync('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`], { cwd: root, stdio: 'inherit' });
  } catch {
    // A failing file still has its duration.
  }
  const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
  const durations = Object.fromEntries(
    testResults
      .map((r) => [relative(root, r.name), Math.round((r.endTime - r.startTime) / 100) / 10])
      .sort((a, b) => b[1] - a[1]),
  );
  writeFileSync(join(root, 'test/support/durations.json'), `${JSON.stringify(durations, null, 2)}\n`);
  process.stdout.write(`recorded ${Object.keys(durations).length} files in test/support/durations.json\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
