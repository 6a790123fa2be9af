// The ledger: `.vigil/ledger.jsonl` of the project, append-only, one JSON
// entry per line. Each entry's `prev` is the SHA-256 (hex) of the previous
// line's exact text (64 zeros for the first), and `hash` is the SHA-256 of
// the entry's own fields, so an edited line is named itself and removing or
// reordering lines breaks the chain where it happened. Entries record run
// starts and ends, step ends, gate answers and vault writes — never a
// secret value.
import { createHash } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { withFileLock } from '../file-lock/file-lock.ts';
import { confined } from '../workspace/confine.ts';

export const GENESIS = '0'.repeat(64);

export interface LedgerEntry {
  seq: number;
  at: string;
  kind: string;
  data: Record<string, unknown>;
  prev: string;
  hash: string;
}

export interface LedgerVerdict {
  valid: boolean;
  entries: number;
  /** 1-based line of the first entry that breaks the chain. */
  broken?: { line: number; reason: string };
}

export function ledgerFile(projectRoot: string): string {
  return confined(projectRoot, join('.vigil', 'ledger.jsonl'), 'ledger', 'the project');
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

function lines(file: string): string[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  return all;
}

/**
 * The ledger's last line as lines() would give it, read from the end of the
 * file: an append costs the same on the ten-thousandth entry as on the first
 * (a wide run appends three entries per child).
 */
function lastLine(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    let chunk = 4096;
    for (;;) {
      const start = Math.max(0, size - chunk);
      const buf = Buffer.allocUnsafe(size - start);
      let got = 0;
      while (got < buf.length) {
        const n = readSync(fd, buf, got, buf.length - got, start + got);
        if (n === 0) break;
        got += n;
      }
      const text = buf.subarray(0, got);
      if (start === 0 && text.length === 0) return undefined;
      // A trailing newline ends the last line; the line starts after the newline before it.
      const end = text.length > 0 && text[text.length - 1] === 0x0a ? text.length - 1 : text.length;
      const from = end > 0 ? text.lastIndexOf(0x0a, end - 1) : -1;
      if (from >= 0 || start === 0) return text.subarray(from + 1, end).toString('utf8');
      chunk *= 4;
    }
  } finally {
    closeSync(fd);
  }
}

export function appendLedger(projectRoot: string, kind: string, data: Record<string, unknown>): LedgerEntry {
  return appendLedgerEntries(projectRoot, [{ kind, data }])[0]!;
}

/** Appends several entries, chained in order, under one taking of the lock (a wide run's entries of one moment). */
export function appendLedgerEntries(projectRoot: string, items: Array<{ kind: string; data: Record<string, unknown> }>): LedgerEntry[] {
  const file = ledgerFile(projectRoot);
  mkdirSync(join(projectRoot, '.vigil'), { recursive: true });
  return withFileLock(`${file}.lock`, 'LEDGER_BROKEN', () => {
    let last = lastLine(file);
    let seq = 1;
    if (last !== undefined) {
      try {
        seq = (JSON.parse(last) as LedgerEntry).seq + 1;
      } catch {
        seq = lines(file).length + 1;
      }
    }
    const entries: LedgerEntry[] = [];
    let text = '';
    for (const { kind, data } of items) {
      const body = { seq, at: new Date().toISOString(), kind, data, prev: last === undefined ? GENESIS : sha256(last) };
      const entry: LedgerEntry = { ...body, hash: sha256(JSON.stringify(body)) };
      last = JSON.stringify(entry);
      text += `${last}\n`;
      entries.push(entry);
      seq += 1;
    }
    appendFileSync(file, text, { mode: 0o600 });
    return entries;
  });
}

export function verifyLedger(projectRoot: string): LedgerVerdict {
  const all = lines(ledgerFile(projectRoot));
  let prev = GENESIS;
  for (const [i, line] of all.entries()) {
    let entry: LedgerEntry;
    try {
      entry = JSON.parse(line) as LedgerEntry;
    } catch {
      return { valid: false, entries: all.length, broken: { line: i + 1, reason: 'not valid JSON' } };
    }
    const { hash, ...body } = entry;
    if (hash !== sha256(JSON.stringify(body))) return { valid: false, entries: all.length, broken: { line: i + 1, reason: 'its content does not match its hash (the line was edited)' } };
    if (entry.prev !== prev) {
      return { valid: false, entries: all.length, broken: { line: i + 1, reason: `prev ${String(entry.prev).slice(0, 12)}… does not match the hash of line ${i} (${prev.slice(0, 12)}…)` } };
    }
    if (entry.seq !== i + 1) return { valid: false, entries: all.length, broken: { line: i + 1, reason: `seq ${entry.seq} where ${i + 1} was expected` } };
    prev = sha256(line);
  }
  return { valid: true, entries: all.length };
}

export function readLedger(projectRoot: string, limit = 50): LedgerEntry[] {
  return lines(ledgerFile(projectRoot))
    .slice(-limit)
    .map((l) => JSON.parse(l) as LedgerEntry);
}
