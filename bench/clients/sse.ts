// Opens one event stream per subscription (each its own socket) and records,
// per observation, when it arrived. Observations carry `data.sent` (publish
// time in ms); the child reports per observation the latest arrival over its
// streams, the latencies seen on its last-opened stream, and its reads and
// own CPU time (it shares the cores with the server it measures).
import net from 'node:net';
import { childArgs, finish, readyThenGo } from '../lib/child-side.ts';
import { nowMs } from '../lib/stats.ts';

interface Args {
  base: string;
  streams: Array<{ id: string; token: string }>;
  cursor: number;
  expected: number;
  timeoutMs: number;
}

const args = childArgs<Args>();
const url = new URL(args.base);
const marker = '"sent":';
/** sent → latest latency (ms) over this child's streams */
const worst = new Map<number, number>();
const lastStream: number[] = [];
let deliveries = 0;
let reads = 0;
let lastArrival = 0;
let complete = 0;
let opened = 0;
let failures = 0;
let onAllComplete: () => void = () => {};
const allComplete = new Promise<void>((r) => {
  onAllComplete = r;
});

// A raw socket rather than node:http: with 10,000 streams on two shared cores the
// reader's cost per read decides the latency measured, so the stream is read
// without an HTTP parser or UTF-8 decoding.
const comma = 44;
const dot = 46;
const zero = 48;
/** The number `readSent` read last. */
let parsed = 0;

/**
 * Reads the decimal number (the publish time in ms, e.g. 1764031234567.891)
 * that starts at `at` and ends at a comma, digit by digit: without a string
 * per delivery the reader spends its CPU on reading, not on parsing. Returns
 * the comma's offset, or -1 when the read cut the number.
 */
function readSent(text: string, at: number): number {
  let whole = 0;
  let fraction = 0;
  let scale = 1;
  let inFraction = false;
  for (let k = at; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === comma) {
      parsed = whole + fraction / scale;
      return k;
    }
    if (c === dot) inFraction = true;
    else if (inFraction) {
      fraction = fraction * 10 + (c - zero);
      scale *= 10;
    } else whole = whole * 10 + (c - zero);
  }
  return -1;
}

const readBuffer = Buffer.allocUnsafe(256 * 1024);

function open(index: number, stream: { id: string; token: string }): Promise<void> {
  return new Promise((resolve) => {
    // onread: every read lands in one buffer this process reuses (the callback
    // is synchronous), instead of a new Buffer and a stream 'data' event per read.
    const socket = net.connect({ port: Number(url.port), host: url.hostname, onread: { buffer: readBuffer, callback: (length) => onRead(length) } });
    socket.setNoDelay(true);
    socket.write(
      `GET ${url.pathname}/subscriptions/${stream.id}/stream?cursor=${args.cursor} HTTP/1.1\r\nHost: ${url.host}\r\n` +
        `Authorization: Bearer ${stream.token}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    let seen = 0;
    let carry = '';
    let started = false;
    let head = '';
    const onRead = (length: number): boolean => {
      const at = nowMs();
      const chunk = readBuffer.toString('latin1', 0, length);
      if (!started) {
        head += chunk;
        if (!head.includes('retry:')) return true;
        started = true;
        if (!head.startsWith('HTTP/1.1 200')) {
          failures++;
          socket.destroy();
          resolve();
          return false;
        }
        opened++;
        resolve();
      }
      // One latin1 string per read (a copy, no decoding), searched with String#indexOf:
      // Buffer#indexOf costs a native call per marker, more than the search itself.
      reads++;
      const text = carry + chunk;
      let pos = 0;
      let consumed = 0;
      let pending = -1;
      for (;;) {
        const i = text.indexOf(marker, pos);
        if (i < 0) break;
        const stop = readSent(text, i + marker.length);
        if (stop < 0) {
          pending = i;
          break;
        }
        const sent = parsed;
        pos = consumed = stop;
        const latency = at - sent;
        if ((worst.get(sent) ?? -1) < latency) worst.set(sent, latency);
        if (index === args.streams.length - 1) lastStream.push(latency);
        deliveries++;
        lastArrival = at;
        seen++;
        if (seen === args.expected && ++complete === args.streams.length) onAllComplete();
      }
      // Keep what may hold a marker cut by the read: a pending one, or the last bytes.
      const from = pending >= 0 ? pending : Math.max(consumed, text.length - marker.length + 1);
      carry = from < text.length ? text.slice(from) : '';
      return true;
    };
    socket.on('error', () => {
      if (!started) {
        failures++;
        resolve();
      }
    });
  });
}

// Open in waves so that the server's accept queue is not flooded.
const wave = 200;
for (let i = 0; i < args.streams.length; i += wave) {
  await Promise.all(args.streams.slice(i, i + wave).map((s, j) => open(i + j, s)));
}
await readyThenGo();
const cpuAtGo = process.cpuUsage();
await Promise.race([allComplete, new Promise((r) => setTimeout(r, args.timeoutMs))]);
const cpu = process.cpuUsage(cpuAtGo);
finish({ opened, failures, deliveries, complete, lastArrival, worst: [...worst.entries()], lastStream, reads, cpuSeconds: (cpu.user + cpu.system) / 1e6 });
