// 3 SSE yardstick: the same engine (`vigil bench fanout`) and the same
// open-loop burst as the SSE scenario, against a bare uWebSockets.js
// broadcaster (bench/clients/bare-broadcaster.ts) that keeps no state and
// answers only what the engine asks. Vigil's p99 and RSS per stream are
// compared with its own.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { BenchContext } from '../lib/context.ts';
import { client, json } from '../lib/http.ts';
import { log } from '../lib/report.ts';
import { round, sleep } from '../lib/stats.ts';
import { restMs } from './memory.ts';
import { fanOut, type SseFigures } from './sse.ts';

export async function bareFanOut(ctx: BenchContext): Promise<SseFigures> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/clients/bare-broadcaster.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const match = /^listening (\d+)$/.exec(line);
        if (match) resolve(Number(match[1]));
      });
      child.once('exit', (code) => reject(new Error(`the bare broadcaster exited (${code}) before listening`)));
    });
    const base = `http://127.0.0.1:${port}/mp/v0`;
    const request = client(`http://127.0.0.1:${port}`, 16);
    const rss = async () => (await json<{ rss: number }>(request, 'GET', '/memory')).rss;
    let m0 = 0;
    let m1 = 0;
    const run = await fanOut(base, ctx.size.streams, ctx.size.events, {
      subscribed: async () => {
        await sleep(restMs);
        m0 = await rss();
      },
      opened: async () => {
        await sleep(restMs);
        m1 = await rss();
      },
    });
    const perStreamKB = (m1 - m0) / Math.max(1, run.opened) / 1024;
    log(`bare broadcaster: ${run.opened} streams open, ${run.deliveries} deliveries, ${run.violations} lost or duplicated; p99 ${round(run.latest.p99)} ms, ${round(perStreamKB, 2)} KB RSS per stream`);
    return { p99: run.latest.p99, perStreamKB };
  } finally {
    child.kill('SIGKILL');
  }
}
