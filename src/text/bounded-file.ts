// Reading a file a user or a repository put in place, refused before it is
// read when it is far larger than what it could hold: parsing a 50 MB file
// that should hold settings kept it in memory several times over.
import { readFileSync, statSync } from 'node:fs';

/** The file as UTF-8 text; past `maxBytes` an Error `it holds 47.7 MB; <limit>`, nothing read. */
export function readBoundedText(file: string, maxBytes: number, limit: string): string {
  const bytes = statSync(file).size;
  if (bytes > maxBytes) throw new Error(`it holds ${(bytes / 1024 / 1024).toFixed(1)} MB; ${limit}`);
  return readFileSync(file, 'utf8');
}
