// `npx tsx bench/webhook-fanout.ts [--registrations N] [--rounds R]`:
// webhook fan-out of the cloud API. A real `vigil serve` (durable state,
// --allow-insecure-webhooks) holds N registrations (default 1,000) on one
// event; each round POSTs one event to /v1/events and a local receiver, which
// checks every signature with the standardwebhooks verifier, times each
// delivery. Figures: deliveries per second and p50/p99 from the event's POST
// to its arrival. Baseline in the same run: a separate process sending the
// same number of signed POSTs straight to the receiver over the same number
// of keep-alive sockets (64), so the ratio is what the server's fan-out
// (store, queue, signing, retries bookkeeping) costs over bare HTTP.
// The machine is shared: the figures are indicative. The server's webhook
// limits (fan-out per event, registrations per URL and host) are raised to N.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { builtCli } from './lib/built.ts';
import { client, json } from './lib/http.ts';
import { nowMs, round, summary } from './lib/stats.ts';

const argv = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const secret = 'bench-webhook-secret-0123';

if (argv[0] === '--baseline-sender') await baselineSender(argv[1]!, Number(argv[2]));
else await main();

async function main(): Promise<void> {
  const registrations = flag('--registrations', 1000);
  const rounds = flag('--rounds', 5);
  const receiver = await startReceiver();
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-fanout-'));
  const server = await startVigil(dir);
  try {
    const admin = 'bench-admin';
    const request = client(`${server.url}/v1`, 8);
    const { key } = await json<{ key: string }>(request, 'POST', '/api-keys', { name: 'bench' }, admin);
    const started = nowMs();
    for (let i = 0; i < registrations; i += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, registrations - i) }, () =>
          json(request, 'POST', '/webhooks', { event: 'cir.capture', url: receiver.url, secret }, key),
        ),
      );
    }
    const registerMs = nowMs() - started;

    const latencies: number[] = [];
    const rates: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const arrived = receiver.expect(registrations);
      const sent = nowMs();
      await json(request, 'POST', '/events', { type: 'cir.capture', data: { round: r } }, key);
      const times = await arrived;
      rates.push((registrations / (Math.max(...times) - sent)) * 1000);
      for (const t of times) latencies.push(t - sent);
    }
    if (receiver.unverified > 0) throw new Error(`${receiver.unverified} deliveries failed signature verification`);

    const baselineRates: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const go = await readyBaseline(receiver.url, registrations);
      const arrived = receiver.expect(registrations);
      const sent = nowMs();
      await go();
      const times = await arrived;
      baselineRates.push((registrations / (Math.max(...times) - sent)) * 1000);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const lat = summary(latencies);
    const rate = median(rates);
    const baseline = median(baselineRates);
    const rows = [
      ['registrations', registrations, ''],
      ['register (sequential batches of 8)', round(registrations / (registerMs / 1000)), 'registrations/s'],
      ['fan-out deliveries/s (median of rounds)', round(rate), 'deliveries/s'],
      ['baseline: direct signed POSTs/s (separate process)', round(baseline), 'POSTs/s'],
      ['ratio fan-out / baseline', round(rate / baseline, 2), ''],
      ['event → delivery p50', round(lat.p50, 1), 'ms'],
      ['event → delivery p99', round(lat.p99, 1), 'ms'],
      ['event → delivery max', round(lat.max, 1), 'ms'],
    ] as const;
    process.stdout.write(`webhook fan-out, ${rounds} rounds, load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')} (indicative: shared machine)\n`);
    for (const [name, value, unit] of rows) process.stdout.write(`  ${name.padEnd(52)} ${String(value).padStart(10)} ${unit}\n`);
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((r) => server.child.once('exit', r));
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function startReceiver() {
  const verifier = new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
  let waiting: { count: number; times: number[]; done: (times: number[]) => void } | undefined;
  const state = { unverified: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = nowMs();
      try {
        verifier.verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
      } catch {
        state.unverified++;
      }
      res.writeHead(204).end();
      if (waiting) {
        waiting.times.push(at);
        if (waiting.times.length === waiting.count) {
          const w = waiting;
          waiting = undefined;
          w.done(w.times);
        }
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    get unverified() {
      return state.unverified;
    },
    expect(count: number): Promise<number[]> {
      return new Promise((done) => {
        waiting = { count, times: [], done };
      });
    },
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

async function startVigil(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const args = [builtCli(), 'serve', '--port', '0', '--state', join(dir, 'state.db'), '--allow-admin=bench-admin', '--allow-insecure-webhooks',
    // One receiver takes every registration, and one event reaches all of them: past the defaults (issue 42).
    '--webhook-limits', 'fanout_per_event=100000,registrations_per_url=100000,registrations_per_host=100000'];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (c: Buffer) => (errors = (errors + c.toString()).slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const match = /serving the monitor protocol at (\S+)\/mp\/v0/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${errors}`)));
  });
  return { url, child };
}

/** Starts the baseline sender and waits until it has loaded; the returned function starts its sends and waits for it to finish. */
function readyBaseline(url: string, count: number): Promise<() => Promise<void>> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/webhook-fanout.ts', '--baseline-sender', url, String(count)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`baseline sender exited ${code}`)))),
  );
  return new Promise((resolve) => {
    child.stdout!.once('data', () =>
      resolve(() => {
        child.stdin!.end('go\n');
        return exited;
      }),
    );
  });
}

/** The baseline: signed POSTs straight to the receiver, 64 keep-alive sockets, as the server sends them. */
async function baselineSender(url: string, count: number): Promise<void> {
  const { DeliverySender } = await import('../src/cloud/signed-delivery.ts');
  const sender = new DeliverySender(true);
  const body = JSON.stringify({ type: 'cir.capture', timestamp: new Date().toISOString(), data: { baseline: true } });
  process.stdout.write('ready\n');
  for await (const _ of process.stdin) break;
  const outcomes = await Promise.all(Array.from({ length: count }, (_, i) => sender.send(url, secret, `msg_baseline_${i}`, body)));
  sender.close();
  if (outcomes.some((o) => !o.delivered)) process.exit(1);
}
