// Opens one event stream per subscription (each its own socket) and records,
// per observation, when it arrived. Observations carry `data.sent` (publish
// time in ms); the child reports per observation the latest arrival over its
// streams, and the latencies seen on its last-opened stream.
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
// as bytes (Buffer.indexOf on the marker) without an HTTP parser or decoding.
const markerBytes = Buffer.from(marker);
const comma = 44;

function open(index: number, stream: { id: string; token: string }): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    socket.setNoDelay(true);
    socket.write(
      `GET ${url.pathname}/subscriptions/${stream.id}/stream?cursor=${args.cursor} HTTP/1.1\r\nHost: ${url.host}\r\n` +
        `Authorization: Bearer ${stream.token}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    let seen = 0;
    let carry: Buffer | undefined;
    let started = false;
    let head = '';
    socket.on('data', (data: Buffer) => {
      const at = nowMs();
      if (!started) {
        head += data.toString('latin1');
        if (!head.includes('retry:')) return;
        started = true;
        if (!head.startsWith('HTTP/1.1 200')) {
          failures++;
          socket.destroy();
          resolve();
          return;
        }
        opened++;
        resolve();
      }
      const buf = carry ? Buffer.concat([carry, data]) : data;
      let pos = 0;
      let consumed = 0;
      let pending = -1;
      for (;;) {
        const i = buf.indexOf(markerBytes, pos);
        if (i < 0) break;
        const stop = buf.indexOf(comma, i + markerBytes.length);
        if (stop < 0) {
          pending = i;
          break;
        }
        const sent = Number(buf.toString('latin1', i + markerBytes.length, stop));
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
      const from = pending >= 0 ? pending : Math.max(consumed, buf.length - markerBytes.length + 1);
      carry = from < buf.length ? Buffer.from(buf.subarray(from)) : undefined;
    });
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
await Promise.race([allComplete, new Promise((r) => setTimeout(r, args.timeoutMs))]);
finish({ opened, failures, deliveries, complete, lastArrival, worst: [...worst.entries()], lastStream });
