// Issue 15 point 4: 2,000 SSE readers that stop reading must not stall the
// server for everyone else. Opens N streams whose sockets are paused (the
// kernel buffers fill, then the server's writes back up), publishes large
// observations for a while, and measures the latency of GET /discover from a
// separate client during it, against the same measurement with no streams.
//   npx tsx bench/slow-readers.ts [--transport node|uws] [--streams 2000]
import { connect, type Socket } from 'node:net';
import { startServerProcess } from '../test/support/server-process.ts';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const transport = arg('transport', 'node') as 'node' | 'uws';
const streams = Number(arg('streams', '2000'));

async function json(url: string, method: string, body?: unknown, token?: string): Promise<any> {
  const r = await fetch(url, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return r.json();
}

async function discoverLatencies(base: string, ms: number): Promise<number[]> {
  const out: number[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const t = performance.now();
    await fetch(`${base}/discover`).then((r) => r.arrayBuffer());
    out.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
  return out.sort((a, b) => a - b);
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

const server = await startServerProcess({ transport });
const base = server.base;
try {
  const created = await json(`${base}/monitors`, 'POST', { id: 'slow', visibility: 'public' });
  const owner = created.owner_token as string;
  const publishFor = async (ms: number) => {
    const data = { pad: 'x'.repeat(16_000) };
    const end = Date.now() + ms;
    let n = 0;
    while (Date.now() < end) {
      await json(`${base}/monitors/slow/observations`, 'POST', { type: 'load', subject: `s${n % 10}`, data }, owner);
      n++;
    }
    return n;
  };
  const quiet = discoverLatencies(base, 5000);
  const quietPublished = await publishFor(5000);
  const before = await quiet;

  const sockets: Socket[] = [];
  const url = new URL(base);
  for (let i = 0; i < streams; i++) {
    const sub = await json(`${base}/subscriptions`, 'POST', { monitor: 'slow', subscriber: `reader:${i}` });
    const socket = connect(Number(url.port), url.hostname);
    socket.write(`GET ${url.pathname}/subscriptions/${sub.subscription.id}/stream HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${sub.token}\r\nAccept: text/event-stream\r\n\r\n`);
    socket.pause(); // never read: the server's writes back up
    socket.on('error', () => {});
    sockets.push(socket);
  }
  const loaded = discoverLatencies(base, 8000);
  const loadedPublished = await publishFor(8000);
  const during = await loaded;
  for (const s of sockets) s.destroy();
  const rss = Number(/VmRSS:\s+(\d+)/.exec(await import('node:fs').then((fs) => fs.readFileSync(`/proc/${server.child.pid}/status`, 'utf8')))?.[1] ?? 0);
  console.log(`transport ${transport}, ${streams} paused SSE readers, 16 KB observations`);
  console.log(`GET /discover latency, no readers:     p50 ${pct(before, 0.5).toFixed(1)} ms  p99 ${pct(before, 0.99).toFixed(1)} ms  max ${before.at(-1)!.toFixed(1)} ms  (${quietPublished} published in 5 s)`);
  console.log(`GET /discover latency, paused readers: p50 ${pct(during, 0.5).toFixed(1)} ms  p99 ${pct(during, 0.99).toFixed(1)} ms  max ${during.at(-1)!.toFixed(1)} ms  (${loadedPublished} published in 8 s)`);
  console.log(`ratio p99 (paused / none): ${(pct(during, 0.99) / pct(before, 0.99)).toFixed(2)}; server RSS after: ${(rss / 1024).toFixed(0)} MB`);
} finally {
  await server.stop();
}
