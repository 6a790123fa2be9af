// The fan-out and publish runs' sections of the HTML report: headline
// figures, rates over time, latency histograms, and the records of anything
// lost or duplicated.
import { esc, histogramChart, lineChart, palette } from './charts.ts';
import { ms, num, rate } from './format.ts';
import { bars, emptyHistogram, record } from './histogram.ts';
import { seriesStepMs } from './lease-records.ts';
import { factTable, type ReportSection } from './report.ts';
import type { FanoutRun } from './run-fanout.ts';
import type { PublishRun } from './run-publish.ts';
import { fanoutViolations } from './stream-figures.ts';

const perSecond = (counts: number[]): Array<[number, number]> => counts.map((n, i) => [((i + 1) * seriesStepMs) / 1000, n / (seriesStepMs / 1000)]);

const histogramOfSamples = (samples: number[]) => {
  const h = emptyHistogram();
  for (const s of samples) record(h, s);
  return h;
};

export function fanoutSection(title: string, run: FanoutRun): ReportSection {
  const f = run.figures;
  const bad = fanoutViolations(f);
  const facts = factTable([
    ['servers', esc(f.servers.map((s) => `${s.root} (${s.software}${s.node ? `, node ${s.node}` : ''})`).join('; '))],
    ['scenario', esc(`${Object.entries(f.flags).map(([k, v]) => `${k} ${v}`).join(', ')}`)],
    ['ran', esc(`${f.elapsedSeconds.toFixed(1)} s from ${f.startedAt}${f.interrupted ? ' (interrupted)' : ''}; machine load ${f.client.load[0].toFixed(1)} → ${f.client.load[1].toFixed(1)} on ${f.client.cores} cores`)],
    ['streams open', esc(`${num(f.streams.opened)} of ${num(f.streams.asked)}`)],
    ['publishes acknowledged', esc(`${num(f.publishes.acknowledged)} (${rate(f.publishes.perSecond, '/s')}), p99 ${ms(f.publishes.latency.p99)}`)],
    ['deliveries', esc(`${num(f.deliveries.total)} (${rate(f.deliveries.perSecond, '/s')})`)],
    ['publish → first stream', esc(`p50 ${ms(f.toFirst.p50)}, p99 ${ms(f.toFirst.p99)}, max ${ms(f.toFirst.max)}`)],
    ['publish → last stream', esc(`p50 ${ms(f.toLast.p50)}, p99 ${ms(f.toLast.p99)}, max ${ms(f.toLast.max)}`)],
    ['lost / duplicated', bad === 0 ? '<span class="ok">none</span>' : `<span class="bad">${num(f.lost.before + f.lost.after)} lost, ${num(f.duplicated.before + f.duplicated.after)} duplicated</span>`],
    ...(f.storm
      ? ([
          ['after the reconnect storm', esc(`${num(f.lost.after)} lost, ${num(f.duplicated.after)} duplicated; ${num(f.storm.reconnected)} streams back, reconnect p99 ${ms(f.storm.reconnect.p99)}`)],
        ] as Array<[string, string]>)
      : []),
    ...(f.serverMemory ? ([['server memory per stream', esc(`${f.serverMemory.perStreamKB.toFixed(2)} KB (${f.serverMemory.beforeMB.toFixed(0)} → ${f.serverMemory.afterMB.toFixed(0)} MB RSS)`)]] as Array<[string, string]>) : []),
    ['client', esc(`${f.client.coresUsed.toFixed(2)} of ${f.client.cores} cores; threads busy ${f.client.threadBusy.map((b) => `${Math.round(b * 100)}%`).join(', ')}`)],
  ]);
  const warnings = f.warnings.map((w) => `<p class="warn">warning: ${esc(w)}</p>`).join('');
  const offences = f.offences.length
    ? `<h3 class="bad">Lost or duplicated: the first records</h3><pre>${esc(f.offences.map((o) => `${o.kind}: seq ${o.seq} on stream ${o.stream} (subscription ${o.subscription}), published ${o.phase} the storm, arrived ${o.times} times`).join('\n'))}</pre>`
    : '';
  const storm = f.storm ? `<p class="note">The reconnect storm began ${f.storm.atSeconds.toFixed(1)} s into the run.</p>` : '';
  return {
    title,
    html: `${facts}${warnings}${offences}
<h3>Deliveries over time</h3>${storm}${lineChart([{ name: 'deliveries/s', color: palette[0]!, points: perSecond(run.deliverySeries) }], {
      yUnit: 'per second',
      xUnit: 'seconds into the run',
      marks: f.storm ? [{ x: f.storm.atSeconds, label: 'reconnect storm' }] : [],
    })}
<h3>Publishes acknowledged over time</h3>${lineChart([{ name: 'publishes acknowledged/s', color: palette[1]!, points: perSecond(run.publishSeries) }], { yUnit: 'per second', xUnit: 'seconds into the run', height: 160 })}
<h3>Latency over events</h3>${histogramChart([
      { name: 'publish → first stream', color: palette[0]!, bars: bars(histogramOfSamples(run.toFirst)) },
      { name: 'publish → last stream', color: palette[2]!, bars: bars(histogramOfSamples(run.toLast)) },
      { name: 'publish acknowledged', color: palette[1]!, bars: bars(run.publishLatency) },
    ])}`,
  };
}

export function publishSection(title: string, run: PublishRun): ReportSection {
  const f = run.figures;
  const facts = factTable([
    ['servers', esc(f.servers.map((s) => `${s.root} (${s.software}${s.node ? `, node ${s.node}` : ''})`).join('; '))],
    ['scenario', esc(`${Object.entries(f.flags).map(([k, v]) => `${k} ${v}`).join(', ')}`)],
    ['ran', esc(`${f.elapsedSeconds.toFixed(1)} s from ${f.startedAt}${f.interrupted ? ' (interrupted)' : ''}; machine load ${f.client.load[0].toFixed(1)} → ${f.client.load[1].toFixed(1)} on ${f.client.cores} cores`)],
    ['durable publishes acknowledged', esc(`${num(f.acknowledged)} (${rate(f.perSecond, '/s')})`)],
    ['latency', esc(`p50 ${ms(f.latency.p50)}, p99 ${ms(f.latency.p99)}, p99.9 ${ms(f.latency.p999)}, max ${ms(f.latency.max)}`)],
    ['seqs given twice', f.duplicateSeqs === 0 ? '<span class="ok">none</span>' : `<span class="bad">${num(f.duplicateSeqs)}</span>`],
    ['client', esc(`${f.client.coresUsed.toFixed(2)} of ${f.client.cores} cores; threads busy ${f.client.threadBusy.map((b) => `${Math.round(b * 100)}%`).join(', ')}`)],
  ]);
  return {
    title,
    html: `${facts}${f.warnings.map((w) => `<p class="warn">warning: ${esc(w)}</p>`).join('')}
<h3>Throughput over time</h3>${lineChart([{ name: 'publishes acknowledged/s', color: palette[0]!, points: perSecond(run.series) }], { yUnit: 'per second', xUnit: 'seconds into the run' })}
<h3>Latency</h3>${histogramChart([{ name: 'publish', color: palette[0]!, bars: bars(run.latency) }])}`,
  };
}
