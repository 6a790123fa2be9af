// The lease baseline: `SET key val NX PX 60000` on 100 keys from
// `concurrency` connections, speaking RESP over a raw socket; a won key is
// deleted at once (the equivalent of claim then complete).
import net from 'node:net';
import { childArgs, finish, readyThenGo } from '../lib/child-side.ts';
import { nowMs } from '../lib/stats.ts';

interface Args {
  concurrency: number;
  durationMs: number;
  keys: number;
  port: number;
}

const args = childArgs<Args>();
const resp = (...parts: string[]) => `*${parts.length}\r\n${parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('')}`;

class Connection {
  private readonly socket: net.Socket;
  private waiting: Array<(line: string) => void> = [];
  private buffer = '';
  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.setNoDelay(true);
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      // Replies used here are single lines (+OK, $-1, :1).
      for (let i = this.buffer.indexOf('\r\n'); i >= 0; i = this.buffer.indexOf('\r\n')) {
        const line = this.buffer.slice(0, i);
        this.buffer = this.buffer.slice(i + 2);
        this.waiting.shift()?.(line);
      }
    });
  }
  send(command: string): Promise<string> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.socket.write(command);
    });
  }
  close(): void {
    this.socket.destroy();
  }
}

const connections = Array.from({ length: args.concurrency }, () => new Connection(args.port));
await Promise.all(connections.map((c) => c.send(resp('PING'))));
await readyThenGo();
let attempts = 0;
let wins = 0;
const start = nowMs();
const until = start + args.durationMs;
await Promise.all(
  connections.map(async (c, w) => {
    while (nowMs() < until) {
      const key = `vigil-bench:${Math.floor(Math.random() * args.keys)}`;
      const reply = await c.send(resp('SET', key, `w${w}`, 'NX', 'PX', '60000'));
      attempts++;
      if (reply === '+OK') {
        wins++;
        await c.send(resp('DEL', key));
      }
    }
  }),
);
const elapsedMs = nowMs() - start;
for (const c of connections) c.close();
finish({ attempts, wins, elapsedMs });
