// Shared by the fake agents: a prompt carries directives that tell the fake
// how to behave, one per line or inline, e.g. "SLEEP_MS=200", "HANG",
// "SAY=DONE", "DONE_AT=3", "WRITE=notes.txt:hello", "FAIL", "PIDFILE=/tmp/x",
// "JSON={"a":1}" (the answer a structured-output run gives; no spaces),
// "COUNT=<file>" (counts the runs in that file), "LINE=<text>" with
// "LINE_AT=<n>", "FAIL_BEFORE=<n>", "ECHO", "USAGE_LIMIT=<seconds>".
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export function parseDirectives(text) {
  const d = {};
  for (const m of text.matchAll(/\b([A-Z_]+)(?:=(\S+))?/g)) {
    if (['SLEEP_MS', 'TURNS', 'ROUNDS', 'SAY', 'DONE_AT', 'WRITE', 'PIDFILE', 'EXIT', 'FAIL_AT', 'JSON', 'COUNT', 'LINE', 'LINE_AT', 'USAGE_LIMIT', 'FAIL_BEFORE'].includes(m[1]) && m[2] !== undefined) {
      if (m[1] === 'WRITE') d.WRITE = [...(d.WRITE ?? []), m[2]];
      else d[m[1]] = m[2];
    } else if (['HANG', 'SILENT_HANG', 'FAIL', 'TRANSIENT', 'ESCAPE', 'NO_PROMPT', 'ECHO'].includes(m[1]) && m[2] === undefined) d[m[1]] = true;
  }
  return d;
}

export function readStdin() {
  return new Promise((res) => {
    let data = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (c) => {
      data += c;
    });
    process.stdin.on('end', () => res(data));
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Writes WRITE=<file>:<content> directives into the working directory. */
export function applyWrites(d) {
  for (const w of d.WRITE ?? []) {
    const colon = w.indexOf(':');
    const file = resolve(process.cwd(), w.slice(0, colon));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${w.slice(colon + 1).replace(/_/g, ' ')}\n`);
  }
}

/** Starts a grandchild in our process group and records both pids, then never returns. */
export async function hang(d, printFirst) {
  const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
  // ESCAPE: one more grandchild in a session of its own (setsid), out of our process group.
  const escaped = d.ESCAPE ? spawn('sleep', ['1001'], { stdio: 'ignore', detached: true }) : null;
  escaped?.unref();
  if (d.PIDFILE) {
    // Whole or absent: tests read it as soon as it exists.
    writeFileSync(`${d.PIDFILE}.partial`, JSON.stringify({ agent: process.pid, grandchild: child.pid, ...(escaped ? { escaped: escaped.pid } : {}) }));
    renameSync(`${d.PIDFILE}.partial`, d.PIDFILE);
  }
  if (printFirst) process.stdout.write(printFirst);
  // Ignore SIGTERM like a stuck program would; only SIGKILL ends us.
  process.on('SIGTERM', () => {});
  await new Promise(() => setInterval(() => {}, 1 << 30));
}

/** COUNT=<file>: adds one to the number in that file (in the working directory) and returns it; 1 without COUNT. */
export function bumpCount(d) {
  if (!d.COUNT) return 1;
  const file = resolve(process.cwd(), d.COUNT);
  let n = 0;
  try {
    n = Number(readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    // first run
  }
  writeFileSync(file, `${n + 1}\n`);
  return n + 1;
}

export function log(file, entry) {
  if (file) appendFileSync(file, `${JSON.stringify(entry)}\n`);
}
