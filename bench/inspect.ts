// `npx tsx bench/inspect.ts [--quick]`: what `vigil serve --inspect` costs.
// Runs the same load against a server without and with the inspector (a
// @statelyai/inspect receiver connected, so every event is relayed) and
// prints the rates with their ratio. Publishing sends no actor events;
// lease cycles (publish, claim, complete) do. The machine is shared, so the
// figures are indicative: compare the ratio, not the absolute rates.
import { createServer } from 'node:net';
import { createWebSocketReceiver } from '@statelyai/inspect';
import { json } from './lib/http.ts';
import { startServer } from './lib/server.ts';
import { createMonitor, subscribe } from './lib/setup.ts';
import { round, sleep } from './lib/stats.ts';

const quick = process.argv.includes('--quick');
const durationMs = quick ? 3000 : 10_000;
const clients = 20;

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((d) => probe.listen(0, '127.0.0.1', d));
  const { port } = probe.address() as { port: number };
  await new Promise((d) => probe.close(d));
  return port;
}

async function loop(work: (i: number, n: number) => Promise<void>): Promise<number> {
  const end = Date.now() + durationMs;
  let done = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      for (let n = 0; Date.now() < end; n++) {
        await work(i, n);
        done++;
      }
    }),
  );
  return done / (durationMs / 1000);
}

async function measure(inspect: boolean) {
  const port = await freePort();
  const server = await startServer({ transport: 'uws', durable: false, args: inspect ? [`--inspect=${port}`] : [] });
  let events = 0;
  if (inspect) {
    createWebSocketReceiver({ server: `ws://127.0.0.1:${port}` }).subscribe(() => {
      events++;
    });
    await sleep(300);
  }
  try {
    const { request } = server;
    const owner = await createMonitor(request, 'bench-inspect', ['observe', 'act']);
    const sub = await subscribe(request, 'bench-inspect', owner, 'agent:bench', { capabilities: ['act'] });
    const publish = await loop(async (i, n) => {
      await json(request, 'POST', '/monitors/bench-inspect/observations', { type: 'bench.item', subject: `p-${i}-${n}` }, owner);
    });
    const lease = await loop(async (i, n) => {
      const subject = `l-${i}-${n}`;
      await json(request, 'POST', '/monitors/bench-inspect/observations', { type: 'bench.task', subject }, owner);
      await json(request, 'POST', `/subscriptions/${sub.id}/leases/claim`, { subject }, sub.token);
      await json(request, 'POST', `/subscriptions/${sub.id}/leases/complete`, { subject, outcome: 'done' }, sub.token);
    });
    await sleep(500);
    return { publish, lease, events };
  } finally {
    await server.stop();
  }
}

const off = await measure(false);
const on = await measure(true);
const rows = [
  { figure: `publish, ${clients} clients`, off: off.publish, on: on.publish, unit: 'obs/s' },
  { figure: `lease cycle (publish + claim + complete), ${clients} clients`, off: off.lease, on: on.lease, unit: 'cycles/s' },
];
process.stdout.write(`vigil serve --inspect: cost (indicative; ${durationMs / 1000} s per figure on a shared machine)\n`);
for (const r of rows) {
  process.stdout.write(`  ${r.figure.padEnd(58)} without ${String(round(r.off)).padStart(7)} ${r.unit}   with ${String(round(r.on)).padStart(7)} ${r.unit}   ratio ${round(r.on / r.off, 2)}\n`);
}
process.stdout.write(`  inspection events relayed to the receiver: ${on.events}\n`);
