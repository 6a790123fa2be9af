// 1 publish, 2 drain, 5 wake and the stored-observations half of 6, on one
// durable server per transport. The fill, the second publish measurement
// and the drain run on uWS only (they measure the store, not the transport).
import { runChildren } from '../lib/children.ts';
import { type BenchContext, load } from '../lib/context.ts';
import { fmt, log, type Transport } from '../lib/report.ts';
import { type BenchServer, startServer } from '../lib/server.ts';
import { createMonitor, fill, head, subscribe } from '../lib/setup.ts';
import { nowMs, round, summary } from '../lib/stats.ts';

export async function publishScenario(ctx: BenchContext, transport: Transport): Promise<void> {
  const { report, size } = ctx;
  const server = await startServer({ transport, durable: true, nodeFlags: ctx.nodeFlags });
  try {
    const owner = await createMonitor(server.request, 'bench-publish');
    const targets = [{ monitor: 'bench-publish', token: owner }];
    // Warmed first: on a cold server the yardstick pays the JIT's compile time and CPU per discover reads high.
    await load(server, { mode: 'discover', concurrency: 50, durationMs: 1000 });
    const discover = await load(server, { mode: 'discover', concurrency: 50, durationMs: size.durationMs });
    const yardstick = { name: 'GET /discover, 50 clients', value: discover.rate, unit: 'req/s' };
    report.add(transport, { scenario: '1 publish', figure: 'yardstick: GET /discover, 50 clients', value: discover.rate, unit: 'req/s' });
    const one = await load(server, { mode: 'publish', concurrency: 1, durationMs: size.durationMs, targets });
    report.add(transport, { scenario: '1 publish', figure: '1 client, sequential', value: one.rate, unit: 'obs/s', baseline: yardstick, ratio: round(one.rate / discover.rate, 3) });
    const at0 = await load(server, { mode: 'publish', concurrency: 50, durationMs: size.durationMs, targets });
    const ratio = round(at0.rate / discover.rate, 3);
    report.add(transport, {
      scenario: '1 publish',
      figure: '50 clients, empty store (group commit)',
      value: at0.rate,
      unit: 'obs/s',
      baseline: yardstick,
      ratio,
      target: '≥ 0.75 of discover and ≥ 30,000 obs/s',
      met: ratio >= 0.75 && at0.rate >= 30_000,
      missedPart: [ratio < 0.75 ? 'ratio < 0.75' : '', at0.rate < 30_000 ? 'rate < 30,000' : ''].filter(Boolean).join(', '),
    });
    report.add(transport, { scenario: '1 publish', figure: '50 clients, latency p99', value: at0.p99, unit: 'ms' });
    report.add(transport, {
      scenario: '1 publish',
      figure: 'server CPU per publish, 50 clients',
      value: at0.cpuUs,
      unit: 'µs',
      baseline: { name: 'server CPU per GET /discover, same server', value: discover.cpuUs, unit: 'µs' },
      ratio: round(at0.cpuUs / discover.cpuUs, 2),
      target: '≤ 1.3× a discover',
      met: at0.cpuUs <= 1.3 * discover.cpuUs,
    });
    if (at0.failed + one.failed > 0) report.note(`publish ${transport}: ${at0.failed + one.failed} failed requests`);
    if (transport === 'uws') await storedAndDrain(ctx, server, owner, at0);
    await wake(ctx, server, transport);
  } finally {
    await server.stop();
  }
}

async function storedAndDrain(ctx: BenchContext, server: BenchServer, owner: string, at0: { rate: number; cpuUs: number }): Promise<void> {
  const { report, size } = ctx;
  const rssBefore = await server.rss();
  const t0 = nowMs();
  await fill(server.request, 'bench-publish', owner, size.stored);
  log(`stored ${size.stored} observations in ${round((nowMs() - t0) / 1000, 1)} s (batches of 1000)`);
  const stored = await head(server.request, 'bench-publish', owner);
  const atN = await load(server, { mode: 'publish', concurrency: 50, durationMs: size.durationMs, targets: [{ monitor: 'bench-publish', token: owner }] });
  const label = ctx.quick ? `${fmt(size.stored)}+ stored (--quick)` : '1,000,000+ stored';
  report.add('uws', {
    scenario: '1 publish',
    figure: `50 clients, ${label}`,
    value: atN.rate,
    unit: 'obs/s',
    baseline: { name: '50 clients, empty store', value: at0.rate, unit: 'obs/s' },
    ratio: round(atN.rate / at0.rate, 3),
    target: 'within 20% of empty',
    met: atN.rate >= 0.8 * at0.rate,
  });
  report.add('uws', { scenario: '1 publish', figure: `server CPU per publish, ${label}`, value: atN.cpuUs, unit: 'µs', baseline: { name: 'the same, empty store', value: at0.cpuUs, unit: 'µs' }, ratio: round(atN.cpuUs / at0.cpuUs, 2) });
  const rssStored = await server.rss();
  report.add('uws', { scenario: '6 memory', figure: `server RSS, ${label} observations`, value: rssStored / 2 ** 20, unit: 'MB', baseline: { name: 'RSS before filling', value: rssBefore / 2 ** 20, unit: 'MB' }, ratio: round(rssStored / rssBefore, 2) });
  log(`${fmt(stored)} observations stored`);

  const drainSub = await subscribe(server.request, 'bench-publish', owner, 'agent:drain', { from: 'earliest' });
  const [drained] = await runChildren<{ observations: number; elapsedMs: number }>('drain', () => ({ base: server.base, subscription: drainSub.id, token: drainSub.token }), 1);
  const drainRate = drained!.observations / (drained!.elapsedMs / 1000);
  report.add('uws', {
    scenario: '2 drain',
    figure: `pull limit=1000 + ack, everything stored`,
    value: drainRate,
    unit: 'obs/s',
    baseline: { name: 'publish, 50 clients, empty store', value: at0.rate, unit: 'obs/s' },
    ratio: round(drainRate / at0.rate, 2),
    target: '≥ 100,000 obs/s',
    met: drainRate >= 100_000,
  });
}

async function wake(ctx: BenchContext, server: BenchServer, transport: Transport): Promise<void> {
  const wakeOwner = await createMonitor(server.request, 'bench-wake');
  const sub = await subscribe(server.request, 'bench-wake', wakeOwner, 'agent:waker');
  const cursor = (await head(server.request, 'bench-wake', wakeOwner)) + 1;
  const [woke] = await runChildren<{ latencies: number[]; publishLatencies: number[] }>(
    'wake',
    () => ({ base: server.base, monitor: 'bench-wake', owner: wakeOwner, subscription: sub.id, token: sub.token, cursor, samples: ctx.size.wakeSamples }),
    1,
  );
  const s = summary(woke!.latencies);
  const own = summary(woke!.publishLatencies);
  const yardstick = (p: 'p50' | 'p99') => ({ name: `the publish's own round trip, ${p}`, value: own[p], unit: 'ms' });
  const figure = 'publish → waiting pull returns';
  ctx.report.add(transport, { scenario: '5 wake', figure: `${figure}, p50 (${ctx.size.wakeSamples} samples)`, value: s.p50, unit: 'ms', baseline: yardstick('p50'), ratio: round(s.p50 / own.p50, 2) });
  ctx.report.add(transport, { scenario: '5 wake', figure: `${figure}, p99`, value: s.p99, unit: 'ms', baseline: yardstick('p99'), ratio: round(s.p99 / own.p99, 2), target: 'p99 < 5 ms', met: s.p99 < 5 });
}
