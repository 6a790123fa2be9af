// The lease run's section of the HTML report: headline figures, throughput
// over time, latency histograms, the timeline of a sample of subjects (each
// hold a bar in its client's colour, provable overlaps in red, crashes
// marked), grants per client, and the records of every violation.
import { barChart, esc, histogramChart, lineChart, palette, type TimelineRow, timeline } from './charts.ts';
import { ms, num, rate } from './format.ts';
import { bars } from './histogram.ts';
import { type LeaseFigures, violationText } from './lease-figures.ts';
import { provablyOverlap } from './lease-judge.ts';
import { endedOk, type Hold, latestExpiry, provenUntil, seriesStepMs } from './lease-records.ts';
import type { LeaseTally } from './lease-tally.ts';
import { factTable, type ReportSection } from './report.ts';

interface LeaseRunView {
  figures: LeaseFigures;
  tally: LeaseTally;
  startMs: number;
  endMs: number;
}

const perSecondSeries = (counts: number[]): Array<[number, number]> => counts.map((n, i) => [((i + 1) * seriesStepMs) / 1000, n / (seriesStepMs / 1000)]);

export function leaseSection(title: string, run: LeaseRunView): ReportSection {
  const f = run.figures;
  const violations = f.duplicates + f.lateEndsAccepted;
  const verdict = violations === 0 ? '<span class="ok">none</span>' : `<span class="bad">${num(violations)}</span>`;
  const facts = factTable([
    ['servers', esc(f.servers.map((s) => `${s.root} (${s.software}${s.node ? `, node ${s.node}` : ''})`).join('; '))],
    ['scenario', esc(`${f.mode}; ${Object.entries(f.flags).map(([k, v]) => `${k} ${v}`).join(', ')}; seed ${f.seed}`)],
    ['ran', esc(`${f.elapsedSeconds.toFixed(1)} s from ${f.startedAt}${f.interrupted ? ' (interrupted)' : ''}; machine load ${f.client.load[0].toFixed(1)} → ${f.client.load[1].toFixed(1)} on ${f.client.cores} cores`)],
    ['claims', esc(`${num(f.claims.attempts)} (${rate(f.claims.perSecond, '/s')}), ${num(f.claims.granted)} granted`)],
    ['cycles', esc(`${num(f.cycles.total)} (${rate(f.cycles.perSecond, '/s')})`)],
    ['violations (duplicates, late ends accepted)', `${verdict} <span class="note">(${num(f.duplicates)} duplicates, ${num(f.lateEndsAccepted)} late ends accepted)</span>`],
    ['late ends refused LEASE_LOST', esc(num(f.lateEndsRefused))],
    ['reclaim after a crash', esc(f.reclaim.reclaimed ? `p50 ${ms(f.reclaim.p50)}, p99 ${ms(f.reclaim.p99)}, max ${ms(f.reclaim.max)} over the ${num(f.reclaim.reclaimed)} crashed holds granted again (of ${num(f.reclaim.crashes)} crashes; ${num(f.reclaim.unreclaimed)} not granted again before the end)` : `${num(f.reclaim.crashes)} crashes, none reclaimed`)],
    ["fairness (Jain's index)", esc(`${Number.isFinite(f.fairness.jain) ? f.fairness.jain.toFixed(3) : '–'}; grants per client ${num(f.fairness.minGrants)}–${num(f.fairness.maxGrants)}`)],
    ['client', esc(`${f.client.coresUsed.toFixed(2)} of ${f.client.cores} cores; threads busy ${f.client.threadBusy.map((b) => `${Math.round(b * 100)}%`).join(', ')}`)],
  ]);
  const warnings = f.warnings.map((w) => `<p class="warn">warning: ${esc(w)}</p>`).join('');
  const t = run.tally;
  const throughput = lineChart(
    [
      { name: 'requests/s', color: palette[7]!, points: perSecondSeries(t.requests) },
      { name: 'grants/s', color: palette[0]!, points: perSecondSeries(t.grantSeries) },
      { name: 'cycles/s', color: palette[1]!, points: perSecondSeries(t.endedSeries) },
      { name: 'refused or unanswered/s', color: '#dc2626', points: perSecondSeries(t.refused) },
    ],
    { yUnit: 'per second', xUnit: 'seconds into the run' },
  );
  // An operation with a handful of requests would make a bar of 100%: it is in the table only.
  const ops = Object.keys(t.latency).filter((op) => t.latency[op]!.count >= 20);
  const histograms = histogramChart(ops.map((op, i) => ({ name: op, color: palette[i % palette.length]!, bars: bars(t.latency[op]!) })));
  const latencyTable = `<table><tr><th>operation</th><th>n</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th></tr>${Object.entries(f.latency)
    .map(([op, p]) => `<tr><td>${esc(op)}</td><td>${num(p.n)}</td><td>${ms(p.p50)}</td><td>${ms(p.p99)}</td><td>${ms(p.p999)}</td><td>${ms(p.max)}</td></tr>`)
    .join('')}</table>`;
  const perNode =
    f.nodes.length > 1
      ? `<h3>Per node</h3><table><tr><th>node</th><th>requests</th><th>p50</th><th>p99</th><th>max</th><th>refused</th><th>unanswered</th></tr>${f.nodes
          .map((n) => `<tr><td>${esc(n.root)}</td><td>${num(n.latency.n)}</td><td>${ms(n.latency.p50)}</td><td>${ms(n.latency.p99)}</td><td>${ms(n.latency.max)}</td><td>${num(n.refused)}</td><td>${n.unanswered ? `<span class="bad">${num(n.unanswered)}</span>` : '0'}</td></tr>`)
          .join('')}</table>`
      : '';
  const refusals = Object.entries(f.refusals);
  const refusalTable = refusals.length
    ? `<table><tr><th>operation and code</th><th>n</th></tr>${refusals.sort((a, b) => b[1] - a[1]).map(([k, n]) => `<tr><td>${esc(k)}</td><td>${num(n)}</td></tr>`).join('')}</table>`
    : '<p class="note">none</p>';
  const violationBlock = f.violations.length
    ? `<h3 class="bad">Violations: the offending records</h3><pre>${esc(f.violations.map((v) => violationText(v, run.startMs)).join('\n\n'))}</pre>`
    : '';
  return {
    title,
    html: `${facts}${warnings}${violationBlock}
<h3>Throughput over time</h3>${throughput}
<h3>Latency (sent → answered, on the client)</h3>${histograms}${latencyTable}${perNode}
<h3>Lease timeline</h3><p class="note">A sample of subjects (the hottest and some drawn at random; in next mode the first holds of the run; every subject with a violation). Each bar is a hold from its grant's answer to its end being sent, in its client's colour; dashed: a crashed holder's lease until it expired at the latest, or a stalled holder past its lease; ✕: the crash; <span class="bad">red</span>: two holders provably at once.</p>${timeline(timelineRows(run), [0, (run.endMs - run.startMs) / 1000])}
<h3>Grants per client</h3>${barChart(t.grantsPerClient, { yUnit: 'grants', xUnit: 'client' })}
<h3>Refused or unanswered requests</h3>${refusalTable}`,
  };
}

function timelineRows(run: LeaseRunView): TimelineRow[] {
  const bySubject = new Map(run.tally.timeline);
  for (const v of run.figures.violations) {
    const list = bySubject.get(v.subject) ?? [];
    for (const h of v.holds) if (!list.includes(h)) list.push(h);
    bySubject.set(v.subject, list);
  }
  const flagged = new Set(run.figures.violations.map((v) => v.subject));
  const subjects = [...bySubject.keys()]
    .sort((a, b) => Number(flagged.has(b)) - Number(flagged.has(a)) || crashedIn(bySubject.get(b)!) - crashedIn(bySubject.get(a)!) || bySubject.get(b)!.length - bySubject.get(a)!.length)
    .slice(0, 24);
  const s = (t: number) => (t - run.startMs) / 1000;
  return subjects.map((subject) => {
    const holds = bySubject.get(subject)!.sort((a, b) => a.grant.answer - b.grant.answer);
    const segments = holds.flatMap((h) => {
      const color = palette[h.client % palette.length]!;
      const end = h.end?.send ?? h.crashedAt ?? provenUntil(h);
      const label = `${h.holder} (client ${h.client}): granted +${(h.grant.answer - run.startMs).toFixed(1)} ms${h.end ? `, ${h.end.op} ${endedOk(h) ? 'accepted' : `refused ${h.end.code ?? h.end.status}`}` : h.crashedAt !== undefined ? ', crashed' : ''}`;
      const out: TimelineRow['segments'] = [{ from: s(h.grant.answer), to: s(Math.min(end, h.stalled ? provenUntil(h) : end)), color, title: label }];
      if (h.crashedAt !== undefined) out.push({ from: s(h.crashedAt), to: s(latestExpiry(h)), color, title: `${h.holder}'s lease after its crash, until it expired at the latest`, dashed: true });
      if (h.stalled && h.end) out.push({ from: s(provenUntil(h)), to: s(h.end.send), color, title: `${h.holder} stalled past its lease`, dashed: true });
      return out;
    });
    const alarms: TimelineRow['alarms'] = [];
    for (let i = 0; i < holds.length; i++) {
      for (let j = i + 1; j < holds.length; j++) {
        const [a, b] = [holds[i]!, holds[j]!];
        if (!provablyOverlap(a, b)) continue;
        alarms.push({ from: s(Math.max(a.grant.answer, b.grant.answer)), to: s(Math.min(provenUntil(a), provenUntil(b))), title: `${a.holder} and ${b.holder} both held "${subject}"` });
      }
    }
    const marks = holds.filter((h) => h.crashedAt !== undefined).map((h) => ({ at: s(h.crashedAt!), title: `${h.holder} crashed holding "${subject}"` }));
    return { label: subject.length > 16 ? `${subject.slice(0, 15)}…` : subject, segments, alarms, marks };
  });
}

const crashedIn = (holds: Hold[]) => holds.filter((h) => h.crashedAt !== undefined).length;
