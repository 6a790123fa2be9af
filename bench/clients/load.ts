// Closed-loop load: `concurrency` workers, each with its own keep-alive
// connection, send the next request as soon as the previous one answers.
//   discover — GET /discover (the transport's ceiling)
//   publish  — POST /monitors/<id>/observations, one observation each
//   lease    — claim a random subject of `subjects`; on a win, complete it
import { childArgs, finish, readyThenGo } from '../lib/child-side.ts';
import { client } from '../lib/http.ts';
import { nowMs } from '../lib/stats.ts';

interface Args {
  base: string;
  mode: 'discover' | 'publish' | 'lease';
  concurrency: number;
  durationMs: number;
  monitor?: string;
  token?: string;
  subscriptions?: Array<{ id: string; token: string }>;
  subjects?: number;
  worker?: number;
}

const args = childArgs<Args>();
const request = client(args.base, args.concurrency);
let ok = 0;
let refused = 0;
let failed = 0;
let wins = 0;

async function worker(index: number, until: number): Promise<void> {
  const sub = args.subscriptions?.[index];
  let n = 0;
  while (nowMs() < until) {
    n++;
    try {
      if (args.mode === 'discover') {
        const r = await request('GET', '/discover');
        if (r.status === 200) ok++;
        else failed++;
      } else if (args.mode === 'publish') {
        const body = { type: 'bench.tick', subject: `s${n % 100}`, data: { n, w: index } };
        const r = await request('POST', `/monitors/${args.monitor}/observations`, body, args.token);
        if (r.status === 201) ok++;
        else failed++;
      } else {
        const subject = `s${Math.floor(Math.random() * (args.subjects ?? 100))}`;
        const path = `/subscriptions/${sub!.id}/leases`;
        const r = await request('POST', `${path}/claim`, { subject, lease_duration_seconds: 60 }, sub!.token);
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
finish({ ok, refused, failed, wins, elapsedMs });
