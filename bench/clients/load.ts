// Closed-loop load: `concurrency` workers, each with its own keep-alive
// connection, send the next request as soon as the previous one answers.
//   discover — GET /discover (the transport's ceiling)
//   publish  — POST /monitors/<id>/observations, one observation each; worker
//              i (counted over all load processes) publishes to targets[i % n]
//   lease    — claim a random subject of `subjects`; on a win, complete it
// Every request's latency goes into a histogram (bench/lib/histogram.ts).
import { childArgs, finish, readyThenGo } from '../lib/child-side.ts';
import { type Histogram, record } from '../lib/histogram.ts';
import { client } from '../lib/http.ts';
import { nowMs } from '../lib/stats.ts';

interface Args {
  base: string;
  mode: 'discover' | 'publish' | 'lease';
  concurrency: number;
  durationMs: number;
  /** Index of this process's first worker among all load processes. */
  offset: number;
  targets?: Array<{ monitor: string; token: string }>;
  subscriptions?: Array<{ id: string; token: string }>;
  subjects?: number;
}

const args = childArgs<Args>();
const request = client(args.base, args.concurrency);
const latency: Histogram = {};
let ok = 0;
let refused = 0;
let failed = 0;
let wins = 0;

async function timed(method: 'GET' | 'POST', path: string, body?: unknown, token?: string) {
  const start = nowMs();
  const reply = await request(method, path, body, token);
  record(latency, nowMs() - start);
  return reply;
}

async function worker(index: number, until: number): Promise<void> {
  const sub = args.subscriptions?.[index];
  const target = args.targets?.[(args.offset + index) % args.targets.length];
  let n = 0;
  while (nowMs() < until) {
    n++;
    try {
      if (args.mode === 'discover') {
        const r = await timed('GET', '/discover');
        if (r.status === 200) ok++;
        else failed++;
      } else if (args.mode === 'publish') {
        const body = { type: 'bench.tick', subject: `s${n % 100}`, data: { n, w: index } };
        const r = await timed('POST', `/monitors/${target!.monitor}/observations`, body, target!.token);
        if (r.status === 201) ok++;
        else failed++;
      } else {
        const subject = `s${Math.floor(Math.random() * (args.subjects ?? 100))}`;
        const path = `/subscriptions/${sub!.id}/leases`;
        const r = await timed('POST', `${path}/claim`, { subject, lease_duration_seconds: 60 }, sub!.token);
        if (r.status === 201) {
          wins++;
          ok++;
          const done = await request('POST', `${path}/complete`, { subject, outcome: 'ok' }, sub!.token);
          if (done.status !== 200) failed++;
        } else if (r.status === 409) {
          refused++;
          ok++;
        } else failed++;
      }
    } catch {
      failed++;
    }
  }
}

// One request per connection before the clock starts, so connecting is not measured.
await Promise.all(Array.from({ length: args.concurrency }, () => request('GET', '/discover')));
await readyThenGo();
const start = nowMs();
await Promise.all(Array.from({ length: args.concurrency }, (_, i) => worker(i, start + args.durationMs)));
const elapsedMs = nowMs() - start;
finish({ ok, refused, failed, wins, elapsedMs, latency });
