// SVG charts for the bench report, drawn as strings: no script, no font or
// file from anywhere, so the page works offline and as an attachment.

export const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const W = 880;
const pad = { left: 64, right: 16, top: 16, bottom: 40 };
export const palette = ['#2563eb', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777', '#4b5563'];

/** A round upper bound for an axis. */
export function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const exp = 10 ** Math.floor(Math.log10(value));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (value <= m * exp + 1e-9) return m * exp;
  return 10 * exp;
}

const short = (n: number) => (n >= 1e6 ? `${+(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${+(n / 1e3).toFixed(1)}k` : `${+n.toFixed(2)}`);

function frame(height: number, body: string, label: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" role="img" aria-label="${esc(label)}" font-family="system-ui, sans-serif" font-size="11">${body}</svg>`;
}

function yAxis(max: number, h: number, unit: string): string {
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const y = pad.top + (1 - f) * (h - pad.top - pad.bottom);
    return `<line x1="${pad.left}" x2="${W - pad.right}" y1="${y}" y2="${y}" stroke="#e5e7eb"/><text x="${pad.left - 6}" y="${y + 4}" text-anchor="end" fill="#374151">${short(max * f)}</text>`;
  });
  return `${ticks.join('')}<text x="12" y="${pad.top + (h - pad.top - pad.bottom) / 2}" transform="rotate(-90 12 ${pad.top + (h - pad.top - pad.bottom) / 2})" text-anchor="middle" fill="#374151">${esc(unit)}</text>`;
}

function legend(items: Array<{ name: string; color: string }>, y: number): string {
  let x = pad.left;
  return items
    .map((item) => {
      const out = `<rect x="${x}" y="${y - 9}" width="10" height="10" fill="${item.color}"/><text x="${x + 14}" y="${y}" fill="#111827">${esc(item.name)}</text>`;
      x += 24 + item.name.length * 6.5;
      return out;
    })
    .join('');
}

export interface Series {
  name: string;
  color: string;
  /** [x, y] points. */
  points: Array<[number, number]>;
}

/** Lines over time (x in seconds). */
export function lineChart(series: Series[], options: { yUnit: string; xUnit: string; height?: number; marks?: Array<{ x: number; label: string }> }): string {
  const h = options.height ?? 240;
  const xMax = niceMax(Math.max(1e-9, ...series.flatMap((s) => s.points.map((p) => p[0]))));
  const yMax = niceMax(Math.max(1e-9, ...series.flatMap((s) => s.points.map((p) => p[1]))));
  const x = (v: number) => pad.left + (v / xMax) * (W - pad.left - pad.right);
  const y = (v: number) => pad.top + (1 - v / yMax) * (h - pad.top - pad.bottom);
  const lines = series
    .filter((s) => s.points.length > 0)
    .map((s) => `<polyline fill="none" stroke="${s.color}" stroke-width="1.6" points="${s.points.map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(' ')}"><title>${esc(s.name)}</title></polyline>`);
  const xTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => `<text x="${x(xMax * f)}" y="${h - pad.bottom + 14}" text-anchor="middle" fill="#374151">${short(xMax * f)}</text>`);
  const marks = (options.marks ?? []).map(
    (m) => `<line x1="${x(m.x)}" x2="${x(m.x)}" y1="${pad.top}" y2="${h - pad.bottom}" stroke="#dc2626" stroke-dasharray="4 3"/><text x="${x(m.x) + 4}" y="${pad.top + 10}" fill="#dc2626">${esc(m.label)}</text>`,
  );
  return frame(h + 18, `${yAxis(yMax, h, options.yUnit)}${marks.join('')}${lines.join('')}${xTicks.join('')}<text x="${W / 2}" y="${h - 8}" text-anchor="middle" fill="#374151">${esc(options.xUnit)}</text>${legend(series, h + 12)}`, `${options.yUnit} over ${options.xUnit}`);
}

export interface HistogramSeries {
  name: string;
  color: string;
  /** [lower edge, upper edge, count]. */
  bars: Array<[number, number, number]>;
}

/** Latency histograms on a logarithmic ms axis, each as the share of its requests. */
export function histogramChart(series: HistogramSeries[], height = 240): string {
  const all = series.flatMap((s) => s.bars);
  if (all.length === 0) return frame(40, '<text x="10" y="24" fill="#6b7280">no requests</text>', 'no requests');
  const lo = Math.max(0.01, Math.min(...all.map((b) => Math.max(b[0], 0.01))));
  const hi = Math.max(...all.map((b) => b[1]));
  const l0 = Math.floor(Math.log10(lo));
  const l1 = Math.max(l0 + 1, Math.ceil(Math.log10(hi)));
  const x = (v: number) => pad.left + ((Math.log10(Math.max(v, 10 ** l0)) - l0) / (l1 - l0)) * (W - pad.left - pad.right);
  // Buckets are merged into 10 per decade so that the bars can be seen.
  const perDecade = 10;
  const shares = series.map((s) => {
    const total = s.bars.reduce((a, b) => a + b[2], 0) || 1;
    const bins = new Map<number, number>();
    for (const [a, b, n] of s.bars) {
      const mid = Math.sqrt(Math.max(a, 10 ** l0) * b);
      const bin = Math.floor((Math.log10(mid) - l0) * perDecade);
      bins.set(bin, (bins.get(bin) ?? 0) + n / total);
    }
    return { s, bins };
  });
  const yMax = niceMax(Math.max(...shares.flatMap((x) => [...x.bins.values()])));
  const y = (v: number) => pad.top + (1 - v / yMax) * (height - pad.top - pad.bottom);
  const bars = shares.flatMap(({ s, bins }, k) =>
    [...bins].map(([bin, share]) => {
      const x0 = x(10 ** (l0 + bin / perDecade));
      const x1 = x(10 ** (l0 + (bin + 1) / perDecade));
      const w = (x1 - x0) / series.length;
      return `<rect x="${(x0 + k * w).toFixed(1)}" y="${y(share).toFixed(1)}" width="${Math.max(1, w - 0.5).toFixed(1)}" height="${(y(0) - y(share)).toFixed(1)}" fill="${s.color}"><title>${esc(s.name)}: ${(share * 100).toFixed(1)}% of requests at ${short(10 ** (l0 + bin / perDecade))}–${short(10 ** (l0 + (bin + 1) / perDecade))} ms</title></rect>`;
    }),
  );
  const ticks: string[] = [];
  for (let d = l0; d <= l1; d++) ticks.push(`<line x1="${x(10 ** d)}" x2="${x(10 ** d)}" y1="${pad.top}" y2="${height - pad.bottom}" stroke="#e5e7eb"/><text x="${x(10 ** d)}" y="${height - pad.bottom + 14}" text-anchor="middle" fill="#374151">${short(10 ** d)} ms</text>`);
  const yTicks = yAxis(yMax, height, 'share of requests');
  return frame(height + 18, `${ticks.join('')}${yTicks}${bars.join('')}${legend(series, height + 12)}`, 'latency histogram');
}

/** One bar per item (e.g. grants per client), with the mean as a line. */
export function barChart(values: number[], options: { yUnit: string; xUnit: string; color?: string; height?: number }): string {
  const h = options.height ?? 200;
  const yMax = niceMax(Math.max(1e-9, ...values));
  const width = (W - pad.left - pad.right) / Math.max(1, values.length);
  const y = (v: number) => pad.top + (1 - v / yMax) * (h - pad.top - pad.bottom);
  const mean = values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  const bars = values.map(
    (v, i) =>
      `<rect x="${(pad.left + i * width).toFixed(1)}" y="${y(v).toFixed(1)}" width="${Math.max(0.5, width - 1).toFixed(1)}" height="${(y(0) - y(v)).toFixed(1)}" fill="${options.color ?? palette[0]}"><title>${esc(options.xUnit)} ${i}: ${v}</title></rect>`,
  );
  const meanLine = `<line x1="${pad.left}" x2="${W - pad.right}" y1="${y(mean)}" y2="${y(mean)}" stroke="#111827" stroke-dasharray="4 3"><title>mean ${mean.toFixed(1)}</title></line>`;
  return frame(h, `${yAxis(yMax, h, options.yUnit)}${bars.join('')}${meanLine}<text x="${W / 2}" y="${h - 8}" text-anchor="middle" fill="#374151">${esc(options.xUnit)} (dashed: the mean)</text>`, `${options.yUnit} per ${options.xUnit}`);
}

export interface TimelineRow {
  label: string;
  segments: Array<{ from: number; to: number; color: string; title: string; dashed?: boolean }>;
  /** Spans drawn in red over the row (overlaps). */
  alarms: Array<{ from: number; to: number; title: string }>;
  /** Points marked with a cross (crashes). */
  marks: Array<{ at: number; title: string }>;
}

/** Rows of spans over time (x in seconds from the start). */
export function timeline(rows: TimelineRow[], span: [number, number]): string {
  const rowH = 18;
  const h = pad.top + rows.length * rowH + pad.bottom;
  const left = 110;
  const [t0, t1] = [span[0], Math.max(span[1], span[0] + 1e-6)];
  const x = (t: number) => left + ((Math.min(Math.max(t, t0), t1) - t0) / (t1 - t0)) * (W - left - pad.right);
  const body = rows.map((row, i) => {
    const y = pad.top + i * rowH;
    const segs = row.segments.map(
      (s) =>
        `<rect x="${x(s.from).toFixed(1)}" y="${y + 3}" width="${Math.max(0.8, x(s.to) - x(s.from)).toFixed(1)}" height="${rowH - 6}" fill="${s.color}" fill-opacity="${s.dashed ? 0.35 : 0.85}"${s.dashed ? ' stroke="#111827" stroke-dasharray="2 2"' : ''}><title>${esc(s.title)}</title></rect>`,
    );
    const alarms = row.alarms.map((a) => `<rect x="${x(a.from).toFixed(1)}" y="${y}" width="${Math.max(2, x(a.to) - x(a.from)).toFixed(1)}" height="${rowH}" fill="#dc2626" fill-opacity="0.75" stroke="#7f1d1d"><title>${esc(a.title)}</title></rect>`);
    const marks = row.marks.map((m) => `<text x="${x(m.at).toFixed(1)}" y="${y + rowH - 4}" text-anchor="middle" font-size="13" fill="#111827">✕<title>${esc(m.title)}</title></text>`);
    return `<text x="${left - 6}" y="${y + rowH - 5}" text-anchor="end" fill="#111827">${esc(row.label)}</text><line x1="${left}" x2="${W - pad.right}" y1="${y + rowH / 2}" y2="${y + rowH / 2}" stroke="#f3f4f6"/>${segs.join('')}${alarms.join('')}${marks.join('')}`;
  });
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => `<text x="${left + f * (W - left - pad.right)}" y="${h - pad.bottom + 14}" text-anchor="${f === 1 ? 'end' : f === 0 ? 'start' : 'middle'}" fill="#374151">${short(t0 + f * (t1 - t0))} s</text>`);
  return frame(h, `${body.join('')}${ticks.join('')}`, 'lease timeline');
}
