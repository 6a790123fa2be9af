// 8 scaling: durable publish rate and p99 latency at 1, 10, 50 and 200
// connections on one monitor, and with 50 connections spread over 1, 10 and
// 100 monitors (worker i publishes to monitor i mod n). One uWS server for
// every point; the curves go to bench/scaling.svg.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { type BenchContext, load } from '../lib/context.ts';
import { startServer } from '../lib/server.ts';
import { createMonitor } from '../lib/setup.ts';
import { round } from '../lib/stats.ts';
import { renderCharts, type Series } from '../lib/svg.ts';

export const connectionPoints = [1, 10, 50, 200];
export const monitorPoints = [1, 10, 100];

export interface ScalingPoint {
  connections: number;
  monitors: number;
  rate: number;
  p50: number;
  p99: number;
  cpuUs: number;
}

export async function scalingScenario(ctx: BenchContext, svgFile: string): Promise<ScalingPoint[]> {
  const server = await startServer({ transport: 'uws', durable: true, nodeFlags: ctx.nodeFlags });
  const points: ScalingPoint[] = [];
  try {
    const targets: Array<{ monitor: string; token: string }> = [];
    for (let i = 0; i < Math.max(...monitorPoints); i++) targets.push({ monitor: `scale-${i}`, token: await createMonitor(server.request, `scale-${i}`) });
    const measure = async (curve: string, connections: number, monitors: number, first?: ScalingPoint) => {
      const r = await load(server, { mode: 'publish', concurrency: connections, durationMs: ctx.size.scalingMs, targets: targets.slice(0, monitors) });
      if (r.failed > 0) ctx.report.note(`scaling: ${r.failed} failed requests at ${connections} connections, ${monitors} monitors`);
      const point = { connections, monitors, rate: r.rate, p50: r.p50, p99: r.p99, cpuUs: r.cpuUs };
      points.push(point);
      const figure = `${curve}: ${connections} connection${connections > 1 ? 's' : ''} on ${monitors} monitor${monitors > 1 ? 's' : ''}`;
      // Each point against the curve's first, so that the ratio column reads as the growth.
      const base = first ?? point;
      const firstName = `${base.connections} connection${base.connections > 1 ? 's' : ''} on ${base.monitors} monitor${base.monitors > 1 ? 's' : ''}`;
      ctx.report.add('uws', { scenario: '8 scaling', figure: `${figure}, publish rate`, value: r.rate, unit: 'obs/s', baseline: { name: firstName, value: base.rate, unit: 'obs/s' }, ratio: round(r.rate / base.rate, 2) });
      ctx.report.add('uws', { scenario: '8 scaling', figure: `${figure}, latency p99`, value: r.p99, unit: 'ms', baseline: { name: firstName, value: base.p99, unit: 'ms' }, ratio: round(r.p99 / base.p99, 2) });
      return point;
    };
    const byConnections: ScalingPoint[] = [];
    for (const c of connectionPoints) byConnections.push(await measure('by connections', c, 1, byConnections[0]));
    const byMonitors: ScalingPoint[] = [];
    for (const m of monitorPoints) byMonitors.push(await measure('by monitors', 50, m, byMonitors[0]));
    writeFileSync(svgFile, scalingSvg(byConnections, byMonitors, `commit ${ctx.commit}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, load average ${os.loadavg()[0]!.toFixed(1)}${ctx.quick ? ', --quick' : ''}`));
    ctx.report.note(`scaling curves written to ${svgFile}`);
  } finally {
    await server.stop();
  }
  return points;
}

function scalingSvg(byConnections: ScalingPoint[], byMonitors: ScalingPoint[], when: string): string {
  const series = (points: ScalingPoint[]): Series[] => [
    { name: 'publish rate', unit: 'obs/s', values: points.map((p) => p.rate), axis: 'left', colour: '#1f77b4' },
    { name: 'p99 latency', unit: 'ms', values: points.map((p) => p.p99), axis: 'right', colour: '#d62728', dashed: true },
  ];
  const caption = `vigil serve (uWS, durable state), closed-loop clients on loopback, ${os.cpus().length} cores shared; ${when}`;
  return renderCharts(
    [
      { title: 'Publish vs concurrent connections (1 monitor)', xLabel: 'connections', xs: byConnections.map((p) => p.connections), series: series(byConnections) },
      { title: 'Publish vs monitors (50 connections)', xLabel: 'monitors', xs: byMonitors.map((p) => p.monitors), series: series(byMonitors) },
    ],
    caption,
  );
}
