// JSON files Vigil keeps for itself (run records, the token files under the
// Vigil home): written whole or not at all, and read back as an object or as
// nothing when the file is missing or not one.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';

let written = 0;

/** Writes `value` whole or not at all; `mode` (e.g. 0o600 for a file of tokens) from the first byte. */
export function writeJsonAtomic(file: string, value: unknown, mode?: number): void {
  // Unique to this process and thread without drawing random bytes for every write.
  written += 1;
  const tmp = `${file}.${process.pid}.${threadId}.${written}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, mode === undefined ? undefined : { mode });
  renameSync(tmp, file);
}

/** The JSON object in `file`; null when there is none (missing, unreadable, or JSON that is not an object). */
export function readJsonObject<T>(file: string): Record<string, T> | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, T>) : null;
  } catch {
    return null;
  }
}
